//go:build linux

package sandbox

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/containerd/cgroups/v3/cgroup1"

	"github.com/wshub/wshub/core"
)

// Each turn's processes run in a cgroup of their own, which holds them to the
// workspace's size: memory.max (v1: memory.limit_in_bytes) its memory, a CFS quota of
// its vCPUs, and pids.max LimitsConfig.PidsMax processes and threads. The group is made
// when the turn starts, below the hub's own cgroup ("wshub/<name>" on v1, in each
// controller's hierarchy; "turn-<name>" beside the hub's own leaf on v2; the name is the
// runner's scope and the workspace, see turnName), and removed, its processes killed
// first, when the turn ends. cgroups_v1.go and cgroups_v2.go do it with containerd's
// cgroups library.
//
// The turn's first process joins the group before it runs anything else: it is /bin/sh
// running a fixed script (joinScript, argv[0] cgroupHelper), which writes into the
// group's cgroup.procs and then execs the sandbox; for a "full" network, the script that
// sets up its network does it first (netns.go). Every process the agent starts after
// that is born in the group; none can fork its way out in between, as it could if the
// hub moved the child after starting it. (The joiner was the hub's own executable
// re-run as a helper: each start of it costs a trivial turn 20 ms or so of CPU.)

// DefaultPidsMax is the processes and threads one turn may have at once.
const DefaultPidsMax = 4096

// cgroupHelper is the argv[0] of the shell that joins the turn's cgroup, as ps shows it.
const cgroupHelper = "wshub-agent-cgroup"

// cgroupWait bounds the wait for a turn's processes to be gone once killed.
const cgroupWait = 10 * time.Second

// turnControllers are the controllers a turn's group needs.
var turnControllers = []cgroup1.Name{cgroup1.Memory, cgroup1.Pids, cgroup1.Cpu}

// cpuPeriod is the CFS period (100 ms, the kernel's default); a turn of n vCPUs gets a
// quota of n periods.
const cpuPeriod = 100_000

// openCgroups picks the hierarchy the machine has: v2 where it is the only one, v1 where
// the controllers are v1's (hybrid hosts included: their v2 tree has no controllers).
func openCgroups(log *slog.Logger) (cgroupHierarchy, error) {
	switch cgroups.Mode() {
	case cgroups.Unified:
		return openV2(systemV2Host(log))
	case cgroups.Legacy, cgroups.Hybrid:
		return openV1()
	}
	return nil, errors.New("this machine has no cgroup file system mounted at /sys/fs/cgroup")
}

// limits are the bounds of one turn's cgroup; 0 is none.
type limits struct {
	memoryBytes int64
	cpus        int
	pids        int64
}

// cgroupHierarchy makes turns' cgroups: cgroup v1 or v2.
type cgroupHierarchy interface {
	// create makes the group name (a turnName) with l, first ending and removing one
	// left by an earlier turn (a hub that died mid-turn), so that its counters start at
	// zero.
	create(name string, l limits) (turnCgroup, error)
	// dirs are the directories of the group name, one per hierarchy.
	dirs(name string) []string
	// String describes the hierarchy, for the start-up log and /readyz.
	String() string
}

// turnCgroup is one turn's cgroup.
type turnCgroup interface {
	// procs are the cgroup.procs files the turn's first process writes itself into.
	procs() []string
	// hit says which limits the turn's processes ran into: an OOM kill, a refused fork.
	hit() (oomKilled, pidsRefused bool)
	// remove kills whatever runs in the group, waits for it to be gone, and removes the
	// group.
	remove() error
}

// turnName is the name of a workspace's turns' group: the runner's scope (a hash of its
// state directory, so two hubs, or a hub and its process runtimes, on one host never take
// each other's groups for leftovers; the same across the hub's restarts, so it does find
// its own), then the workspace.
func turnName(scope, workspaceID string) string { return scope + "-" + SafeName(workspaceID) }

// cgroupScope is the scope of the host whose state directory is stateDir.
func cgroupScope(stateDir string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(stateDir))
	return fmt.Sprintf("%08x", h.Sum32())
}

// probeSeq numbers the probes of one process.
var probeSeq atomic.Int64

// newCgroups finds the machine's cgroup hierarchy and checks that a turn's group can be
// made there, by making and removing one.
func newCgroups(log *slog.Logger) (cgroupHierarchy, error) {
	h, err := openCgroups(log)
	if err != nil {
		return nil, err
	}
	// Named per process and per call: hubs in one process (tests, replicas) probe side
	// by side, and one's removal must not pull another's group away.
	g, err := h.create(fmt.Sprintf("probe-%d-%d", os.Getpid(), probeSeq.Add(1)), limits{memoryBytes: 64 << 20, cpus: 1, pids: 64})
	if err != nil {
		return nil, fmt.Errorf("%s: a turn's cgroup cannot be made: %w", h, err)
	}
	if err := g.remove(); err != nil {
		return nil, fmt.Errorf("%s: a turn's cgroup cannot be removed: %w", h, err)
	}
	return h, nil
}

// limitsFor are the bounds of a turn of size.
func (c LimitsConfig) limitsFor(size core.ProviderSize) limits {
	if size.VCPUCount <= 0 && size.MemoryMiB <= 0 {
		size = c.Size
	}
	return limits{memoryBytes: max(size.MemoryMiB, 0) << 20, cpus: max(size.VCPUCount, 0), pids: cmp.Or(c.PidsMax, DefaultPidsMax)}
}

// String reads like "64 MiB of memory, 1 vCPU, 32 processes".
func (l limits) String() string {
	var parts []string
	if l.memoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%d MiB of memory", l.memoryBytes>>20))
	}
	if l.cpus > 0 {
		parts = append(parts, fmt.Sprintf("%d vCPU", l.cpus))
	}
	return strings.Join(append(parts, fmt.Sprintf("%d processes", l.pids)), ", ")
}

// limitSentence says which limit a turn ran into, "" when none.
func limitSentence(l limits, oomKilled, pidsRefused bool) string {
	var s []string
	if oomKilled {
		s = append(s, fmt.Sprintf("The turn ran out of memory: it used all %d MiB its workspace's size gives it, and the kernel killed a process of it.", l.memoryBytes>>20))
	}
	if pidsRefused {
		s = append(s, fmt.Sprintf("The turn reached its limit of %d processes and threads (WSHUB_AGENT_PIDS_MAX): a process could not be started.", l.pids))
	}
	return strings.Join(s, " ")
}

// join is the turn's command line behind the shell that joins g (joinScript); a
// "full" sandbox's script joins it instead (netns.go), as its first step.
func (inv Process) join(g turnCgroup) Process {
	if inv.netns != nil {
		n := *inv.netns
		n.Procs = g.procs()
		inv.netns = &n
		return inv
	}
	args := append(append([]string{"-c", joinScript, cgroupHelper}, g.procs()...), "--", inv.Path)
	inv.Path, inv.Argv0, inv.Args = "/bin/sh", cgroupHelper, append(args, inv.Args...)
	return inv
}

// joinLoop writes 0 into each cgroup.procs file named before "--" (which moves the
// writer, the shell itself: echo is a builtin), and leaves the arguments after "--". It
// exits 125 when the group cannot be joined (an agent error). The "full" network's
// script (netns_rules.go) starts with it too.
const joinLoop = `while [ "$1" != -- ]; do
	echo 0 >"$1" || { echo "the turn's cgroup could not be joined: $1" >&2; exit 125; }
	shift
done
shift
`

// joinScript joins the cgroup (joinLoop), then execs the program after "--", looked up
// on the turn's PATH as the turn's own exec would: 127 when it is not there (the shell's
// own code, so the turn ends agent_not_installed).
const joinScript = joinLoop + `exec "$@"
`

// readEvent reads a "key value" file of a cgroup (pids.events, memory.events): 0 for a
// key it lacks or a file that is not there.
func readEvent(path, key string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// killAll lists a group's processes and kills them (SIGKILL) until none is left, for at
// most cgroupWait: a process may fork while its siblings are being killed.
func killAll(list func() ([]int, error)) error {
	deadline := time.Now().Add(cgroupWait)
	// Killed processes are gone within a millisecond or so; a group still busy is
	// looked at less and less often.
	for wait := time.Millisecond; ; wait = min(2*wait, 20*time.Millisecond) {
		pids, err := list()
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d process(es) still in the turn's cgroup after %s", len(pids), cgroupWait)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(wait)
	}
}
