package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The Go runtime's monitor thread (sysmon) parks whenever every P is idle, and the
// first system call after that wakes it again at its shortest period, 20 µs, betting
// that more system calls follow. A lightly loaded hub goes idle three times in each
// API request (waiting for the client, then for each of PostgreSQL's two answers), so
// sysmon parked and woke three times a request: six of a request's nine context
// switches, and a third of the hub's CPU per request at one client
// (docs/performance.md). While GODEBUG's schedtrace is set, sysmon never parks: busy
// or idle, it backs off to one wake-up every 10 ms. The period set is the largest
// schedtrace takes (some 24.8 days), so the trace it prints is one line that often,
// once the host's monotonic clock has passed it.
const keepSysmon = "schedtrace=2147483647"

// keepsSysmonAwake names the commands that serve requests for as long as they run.
func keepsSysmonAwake(command string) bool { return command == "serve" || command == "dev" }

// keepSysmonAwake re-executes this process (the same pid, arguments and environment)
// with keepSysmon added to GODEBUG, which the runtime reads only as it starts. It
// returns when it did not: env is not the process's own (a test's), this process
// already runs with it, the operator's GODEBUG sets schedtrace (0 keeps the runtime's
// default), or the exec failed, which it says on stderr.
func keepSysmonAwake(env environ, argv []string, stderr io.Writer) {
	if !env.process || env.sysmonKept || godebugSets(env.get("GODEBUG"), "schedtrace") {
		return
	}
	godebug := keepSysmon
	if g := env.get("GODEBUG"); g != "" {
		godebug = g + "," + keepSysmon
	}
	vars := slices.DeleteFunc(env.list(), func(kv string) bool { return strings.HasPrefix(kv, "GODEBUG=") })
	if err := reexec(argv, append(vars, "GODEBUG="+godebug)); err != nil {
		fmt.Fprintf(stderr, "wshub: running on without GODEBUG=%s: %v\n", keepSysmon, err)
	}
}

// godebugSets reports whether a GODEBUG value has a setting of key.
func godebugSets(godebug, key string) bool {
	for _, f := range strings.Split(godebug, ",") {
		if k, _, ok := strings.Cut(f, "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// withoutKeepSysmon is a GODEBUG value without keepSysmon, and whether it had it: what
// the operator gave, for the processes the hub starts.
func withoutKeepSysmon(godebug string) (string, bool) {
	fields := strings.Split(godebug, ",")
	kept := fields[:0]
	found := false
	for _, f := range fields {
		if f == keepSysmon {
			found = true
			continue
		}
		kept = append(kept, f)
	}
	return strings.Join(kept, ","), found
}
