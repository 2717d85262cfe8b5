package main

// -pin: the hub alone on CPU 0; PostgreSQL, pgbench and this load generator on CPU 1
// (taskset), so that the hub's CPU per request reads directly, without the load
// generator or the database competing for its core.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// pinnedEnv marks the load generator already running under taskset.
const pinnedEnv = "WSHUB_BENCH_PINNED"

// hubCPU and loadCPU are the cores of -pin.
const hubCPU, loadCPU = "0", "1"

// pinSelf runs this program again on loadCPU, and exits with its status; it returns
// when this is that run.
func pinSelf() {
	if os.Getenv(pinnedEnv) == "1" {
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "-pin:", err)
		os.Exit(1)
	}
	cmd := exec.Command("taskset", append([]string{"-c", loadCPU, self}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), pinnedEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			os.Exit(exit.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "-pin: taskset:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// pinPostgres moves the PostgreSQL server this connection reaches (its postmaster and
// every process it started; backends forked later inherit) to loadCPU. The server
// must be on this machine: a remote one is left alone, and said so.
func pinPostgres(ctx context.Context, db *sql.DB) error {
	var backend int
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return err
	}
	postmaster, err := parentOf(backend)
	if err != nil {
		return fmt.Errorf("PostgreSQL is not on this machine (backend %d): %w", backend, err)
	}
	return setAffinity(ctx, postmaster, loadCPU)
}

// unpinPostgres gives the server every CPU again (the bench's end): a cluster left on
// one core would slow whatever runs next on it.
func unpinPostgres(ctx context.Context, db *sql.DB) error {
	var backend int
	if err := db.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return err
	}
	postmaster, err := parentOf(backend)
	if err != nil {
		return err
	}
	return setAffinity(ctx, postmaster, onlineCPUs())
}

// onlineCPUs are the machine's CPUs as taskset reads them ("0-1"): not
// runtime.NumCPU, which a pinned process sees as its own one.
func onlineCPUs() string {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		return strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("0-%d", runtime.NumCPU()-1)
}

// setAffinity sets the CPUs of a process and of every process it started.
func setAffinity(ctx context.Context, parent int, cpus string) error {
	for _, pid := range append([]int{parent}, childrenOf(parent)...) {
		if out, err := exec.CommandContext(ctx, "taskset", "-a", "-p", "-c", cpus, strconv.Itoa(pid)).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset %d: %v: %s", pid, err, out)
		}
	}
	return nil
}

// parentOf is a process's parent, from /proc.
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command is in parentheses and may hold spaces: fields start after the last ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, s)
	}
	return strconv.Atoi(fields[1])
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := parentOf(child); err == nil && p == pid {
			out = append(out, child)
		}
	}
	return out
}

// cpuTime is the CPU (user and system) the process has used, from /proc.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after the command.
	user, _ := strconv.ParseInt(fields[11], 10, 64)
	sys, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(user+sys) * time.Second / time.Duration(clockTicks)
}

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on every Linux Go runs on).
const clockTicks = 100
