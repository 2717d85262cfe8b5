package sandbox

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3"

	"github.com/wshub/wshub/core"
)

// needCgroups skips only where the machine has no cgroup file system at all; anywhere
// else a turn's cgroup must work, and a test that cannot make one fails.
func needCgroups(t *testing.T) {
	t.Helper()
	if cgroups.Mode() == cgroups.Unavailable {
		t.Skip("this machine has no cgroup file system mounted at /sys/fs/cgroup")
	}
}

// limited is a host with the bubblewrap sandbox and a cgroup per turn, running command.
func limited(t *testing.T, l hostLayout, command string, cfg LimitsConfig) *agentHost {
	t.Helper()
	return newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"), Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}}, Limits: cfg}, command)
}

// checkGone fails unless the workspace's cgroup was removed with its turn.
func checkGone(t *testing.T, h *Host, workspaceID string) {
	t.Helper()
	for _, d := range h.cgroups.dirs(turnName(h.scope, workspaceID)) {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("expected the turn's cgroup %s removed after the turn, stat says %v", d, err)
		}
	}
}

// A turn that allocates past its workspace's memory is killed by the kernel, and its
// exit says it ran out of memory; the network helper (joining the group first) and
// bubblewrap are in the group with it, pasta is the hub's.
func TestTurnOverItsMemoryIsKilledAndSaysSo(t *testing.T) {
	needCgroups(t)
	l := newHostLayout(t)
	// 256 MB held in the shell's memory, in a group of 64 MiB.
	hog := `cat >/dev/null; x=$(head -c 268435456 /dev/zero | tr '\0' a); echo "held ${#x} bytes"`
	r := limited(t, l, hog, LimitsConfig{})
	req := l.turn(core.NetworkFull, "eat")
	req.Size = core.ProviderSize{VCPUCount: 1, MemoryMiB: 64}
	res := r.RunTurn(context.Background(), req)
	if res.completed() {
		t.Fatalf("expected the turn to run into its memory limit, got %+v", res)
	}
	if !strings.Contains(res.Limit, "ran out of memory") || !strings.Contains(res.Limit, "64 MiB") {
		t.Errorf("expected the exit to name the memory limit of 64 MiB, got %q", res.Limit)
	}
	checkGone(t, r.Host, req.WorkspaceID)
}

// A fork loop stops at pids.max: the turn's exit names the process limit, every
// process of it is gone afterwards, and the hub can still start processes.
func TestForkLoopStopsAtThePidsLimit(t *testing.T) {
	needCgroups(t)
	l := newHostLayout(t)
	bomb := `cat >/dev/null; while :; do sleep 600 & done`
	r := limited(t, l, bomb, LimitsConfig{PidsMax: 48})
	req := l.turn(core.NetworkNone, "fork")
	res := r.RunTurn(context.Background(), req)
	if res.completed() {
		t.Fatalf("expected the turn to run into its process limit, got %+v", res)
	}
	if !strings.Contains(res.Limit, "limit of 48 processes") {
		t.Errorf("expected the exit to name the limit of 48 processes, got %q", res.Limit)
	}
	checkGone(t, r.Host, req.WorkspaceID)
	if out, err := exec.Command("sh", "-c", "echo alive").Output(); err != nil || strings.TrimSpace(string(out)) != "alive" {
		t.Fatalf("expected the hub to start processes after the turn, got %q, %v", out, err)
	}
}

// The group holds what the size says: memory, a CFS quota of its vCPUs, the pids
// setting; a turn of no size gets the runner's default size.
func TestTurnCgroupHoldsTheWorkspaceSize(t *testing.T) {
	needCgroups(t)
	h, err := openCgroups(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("expected a cgroup hierarchy here: %v", err)
	}
	cfg := LimitsConfig{PidsMax: 100, Size: core.ProviderSize{VCPUCount: 3, MemoryMiB: 512}}
	name := turnName(cgroupScope(t.TempDir()), "ws_sized")
	for _, tt := range []struct {
		name string
		size core.ProviderSize
		want map[string]string // file (v1 controller/file, or v2 file) -> content
	}{
		{"the workspace's size", core.ProviderSize{VCPUCount: 2, MemoryMiB: 128}, map[string]string{
			"memory/memory.limit_in_bytes": "134217728", "cpu/cpu.cfs_quota_us": "200000", "cpu/cpu.cfs_period_us": "100000", "pids/pids.max": "100",
			"memory.max": "134217728", "cpu.max": "200000 100000", "pids.max": "100"}},
		{"no size: the default", core.ProviderSize{}, map[string]string{
			"memory/memory.limit_in_bytes": "536870912", "cpu/cpu.cfs_quota_us": "300000", "pids/pids.max": "100",
			"memory.max": "536870912", "cpu.max": "300000 100000", "pids.max": "100"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := h.create(name, cfg.limitsFor(tt.size))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := g.remove(); err != nil {
					t.Errorf("remove: %v", err)
				}
			}()
			dirs := h.dirs(name)
			for file, want := range tt.want {
				var path string
				switch _, isV1 := h.(*v1); {
				case isV1 && strings.Contains(file, "/"):
					ctrl, name, _ := strings.Cut(file, "/")
					path = filepath.Join(dirs[indexOf(ctrl)], name)
				case !isV1 && !strings.Contains(file, "/"):
					path = filepath.Join(dirs[0], file)
				default:
					continue
				}
				b, err := os.ReadFile(path)
				if got := strings.TrimSpace(string(b)); err != nil || got != want {
					t.Errorf("%s: expected %q, got %q (%v)", path, want, got, err)
				}
			}
		})
	}
}

// indexOf is the position of a v1 controller in turnControllers (and so in dirs).
func indexOf(ctrl string) int {
	for i, n := range turnControllers {
		if string(n) == ctrl {
			return i
		}
	}
	panic("no controller " + ctrl)
}

// A group left by a turn of a hub that died, with a process still in it, is ended and
// made anew by the next turn, whose counters start at zero.
func TestLeftoverCgroupIsEndedByTheNextTurn(t *testing.T) {
	needCgroups(t)
	h, err := openCgroups(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("expected a cgroup hierarchy here: %v", err)
	}
	name := turnName(cgroupScope(t.TempDir()), "ws_left")
	old, err := h.create(name, limits{pids: 50})
	if err != nil {
		t.Fatal(err)
	}
	inv := Process{Path: "/bin/sleep", Args: []string{"600"}}.join(old)
	sleeper := exec.Command(inv.Path, inv.Args...)
	sleeper.Args[0] = inv.Argv0
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	defer func() { _ = sleeper.Process.Kill() }()
	waitInGroup(t, old, sleeper.Process.Pid)

	g, err := h.create(name, limits{pids: 50})
	if err != nil {
		t.Fatalf("expected the leftover group ended and made anew: %v", err)
	}
	defer g.remove()
	if err := <-done; err == nil {
		t.Fatal("expected the leftover process killed")
	}
	if oom, pids := g.hit(); oom || pids {
		t.Errorf("expected fresh counters, got oom %v, pids %v", oom, pids)
	}
}

// waitInGroup waits until pid is listed in every cgroup.procs of g.
func waitInGroup(t *testing.T, g turnCgroup, pid int) {
	t.Helper()
	want := strconv.Itoa(pid)
	waitUntil(t, "the helper to join the group", func() bool {
		for _, f := range g.procs() {
			b, _ := os.ReadFile(f)
			if !strings.Contains("\n"+string(b), "\n"+want+"\n") {
				return false
			}
		}
		return true
	}, &strings.Builder{})
}

// Limits off: no cgroup at all; an unknown mode is refused.
func TestLimitsModes(t *testing.T) {
	h, err := New(context.Background(), Options{StateDir: t.TempDir(), Sandbox: Config{Mode: ModeNone}, Limits: LimitsConfig{Mode: LimitsOff}})
	if err != nil {
		t.Fatal(err)
	}
	if h.cgroups != nil || h.Limits() != LimitsOff {
		t.Errorf("expected no cgroups with limits off, got %q", h.Limits())
	}
	if _, err := New(context.Background(), Options{StateDir: t.TempDir(), Sandbox: Config{Mode: ModeNone}, Limits: LimitsConfig{Mode: "ulimit"}}); err == nil || !strings.Contains(err.Error(), "WSHUB_AGENT_LIMITS") {
		t.Errorf("expected an unknown WSHUB_AGENT_LIMITS refused, got %v", err)
	}
}

// A leftover group with a group below it (none is made by the hub; the removal's
// quick way fails on it) is ended whole: the process below killed, both groups gone.
func TestLeftoverCgroupWithAGroupBelowIsEndedWhole(t *testing.T) {
	needCgroups(t)
	h, err := openCgroups(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("expected a cgroup hierarchy here: %v", err)
	}
	if _, ok := h.(*v1); !ok {
		t.Skip("the quick removal and its way round are cgroup v1's")
	}
	name := turnName(cgroupScope(t.TempDir()), "ws_below")
	if _, err := h.create(name, limits{pids: 50}); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("/bin/sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sleeper.Wait() }()
	defer func() { _ = sleeper.Process.Kill() }()
	var below []string
	for _, d := range h.dirs(name) {
		sub := filepath.Join(d, "below")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		below = append(below, sub)
		if err := os.WriteFile(filepath.Join(sub, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	g, err := h.create(name, limits{pids: 50})
	if err != nil {
		t.Fatalf("expected the leftover group and the one below it ended: %v", err)
	}
	defer g.remove()
	if err := <-done; err == nil {
		t.Fatal("expected the process below killed")
	}
	for _, sub := range below {
		if _, err := os.Stat(sub); !os.IsNotExist(err) {
			t.Errorf("expected %s removed, stat says %v", sub, err)
		}
	}
}
