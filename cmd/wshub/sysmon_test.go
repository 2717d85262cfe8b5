package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A lightly loaded hub goes idle three times in each request (its head, and
// PostgreSQL's two answers). Sysmon parked at each and was woken again by the next
// system call (sysmon.go): pinned to one core, 9 context switches a request instead
// of 3, and a third of the hub's CPU a request. Kept from parking, it wakes once in
// 10 ms however many requests come.
func TestServeKeepsSysmonFromWakingForEachRequest(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	f := newCrashFixture(t, "#!/bin/sh\ncat >/dev/null\necho ok\n")
	// One P, as on a hub's own core (make bench PIN=1); the key's rate would refuse the loop.
	p := startHub(t, f.bin, append(f.env, "GOMAXPROCS=1", "WSHUB_API_RATE=0"))
	sysmon := sysmonThread(t, p.cmd.Process.Pid)
	client := &http.Client{}
	get := func() {
		req, _ := http.NewRequest("GET", p.base+"/v1/api/workspaces", nil)
		req.Header.Set("Authorization", "Bearer "+f.key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/api/workspaces: %d", resp.StatusCode)
		}
	}
	get() // the connection, the prepared statements
	const requests = 500
	before, start := voluntarySwitches(t, sysmon), time.Now()
	for range requests {
		get()
	}
	switches, took := voluntarySwitches(t, sysmon)-before, time.Since(start)
	t.Logf("sysmon: %d voluntary context switches over %d requests in %v", switches, requests, took.Round(time.Millisecond))
	// Once each 10 ms (twice, for a slow machine's slack), and a hundred for the 20 µs
	// steps sysmon backs off from again after taking a P from a long system call.
	// Parking made it some 3 a request.
	if limit := 2*int(took/(10*time.Millisecond)) + 100; switches > limit {
		t.Fatalf("expected sysmon to sleep at most %d times over %v (10 ms at a time), got %d for %d requests", limit, took, switches, requests)
	}
}

// sysmonThread is the runtime's monitor thread of the Go process pid: the first
// thread the runtime starts (runtime.main, before any package's init), so the lowest
// thread id after the process's own.
func sysmonThread(t *testing.T, pid int) string {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, task := range tasks {
		if tid, err := strconv.Atoi(task.Name()); err == nil && tid != pid && (first == 0 || tid < first) {
			first = tid
		}
	}
	if first == 0 {
		t.Fatalf("the hub %d has no thread besides its own", pid)
	}
	return fmt.Sprintf("/proc/%d/task/%d/status", pid, first)
}

// voluntarySwitches is a thread's voluntary context switches, from its status file.
func voluntarySwitches(t *testing.T, status string) int {
	t.Helper()
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "voluntary_ctxt_switches: %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("%s: no voluntary_ctxt_switches", status)
	return 0
}

func TestGodebugKeepsTheOperatorsSettings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, rest string
		found    bool
	}{
		{keepSysmon, "", true},
		{"http2debug=1," + keepSysmon, "http2debug=1", true},
		{"http2debug=1", "http2debug=1", false},
		{"schedtrace=1000", "schedtrace=1000", false},
	} {
		if rest, found := withoutKeepSysmon(c.in); rest != c.rest || found != c.found {
			t.Errorf("withoutKeepSysmon(%q): expected %q, %v; got %q, %v", c.in, c.rest, c.found, rest, found)
		}
	}
	for godebug, want := range map[string]bool{"": false, "schedtrace=0": true, "gctrace=1, schedtrace=1000": true, "scheddetail=1": false} {
		if got := godebugSets(godebug, "schedtrace"); got != want {
			t.Errorf("godebugSets(%q, schedtrace): expected %v, got %v", godebug, want, got)
		}
	}
}
