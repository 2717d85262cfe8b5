//go:build linux

package sandbox

import (
	"fmt"
	"strconv"
	"sync/atomic"
)

// The hub's own work on a workspace's data for a person (the app's diff of a branch an
// agent or a runtime's upload filled) runs in a cgroup of its own too, as a turn does:
// its CPU, memory and processes are bounded whatever the data holds, and what it
// leaves running is killed with the group. The group is made beside the turns'
// ("job-<n>", in the host's scope) when the work starts and removed when it ends,
// and each process joins it first, as a turn's does (joinScript).

// jobLimits bound one piece of such work: git reading a repository needs one CPU and
// far less memory than a turn.
var jobLimits = limits{memoryBytes: 512 << 20, cpus: 1, pids: 64}

// jobSeq names the jobs of this process.
var jobSeq atomic.Int64

// Confine makes a cgroup for one piece of the hub's work (what names it in errors).
// wrap turns a command line into one that joins the group before it runs; release
// kills what still runs there and removes the group. Without cgroups
// (WSHUB_AGENT_LIMITS=off) wrap is nil and the work runs in the hub's own group.
func (h *Host) Confine(what string) (wrap func(path string, args []string) (string, []string), release func() error, err error) {
	if h.cgroups == nil {
		return nil, func() error { return nil }, nil
	}
	g, err := h.cgroups.create(h.scope+"-job-"+strconv.FormatInt(jobSeq.Add(1), 10), jobLimits)
	if err != nil {
		return nil, nil, fmt.Errorf("the cgroup of %s: %w", what, err)
	}
	wrap = func(path string, args []string) (string, []string) {
		joined := append(append([]string{"-c", joinScript, cgroupHelper}, g.procs()...), "--", path)
		return "/bin/sh", append(joined, args...)
	}
	return wrap, g.remove, nil
}
