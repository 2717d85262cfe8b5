//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// preparedAgent says what a turn's process is given: its input, an extra descriptor's
// line (fd 4, as the approval decisions are), its environment, the descriptors open in
// it (ls's: the agent's, and 5, ls's own directory), its network namespace and whether its cgroup holds its memory limit.
const preparedAgent = `read -r prompt
read -r decision <&4
echo "prompt=$prompt decision=$decision"
env | sort | tr '\n' ' '; echo
ls /proc/self/fd
echo "files=$(ls /workspace | tr '\n' ,)"
echo "net=$(readlink /proc/self/ns/net)"
echo "events" >&3`

// preparedTurnOf runs one turn of preparedAgent in workspace ws of size, with the
// network given, a line on fd 4, and returns its reply and what it wrote on fd 3.
func preparedTurnOf(t *testing.T, h *Host, l hostLayout, ws, network string, size core.ProviderSize) (reply, events string) {
	t.Helper()
	dir, home := filepath.Join(l.data, "workspaces", ws, "checkout"), filepath.Join(l.data, "workspaces", ws, "home")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("approved\n"); err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var out, ev strings.Builder
	p := Process{Path: "/bin/sh", Args: []string{"-c", preparedAgent}, Stdin: "hello " + ws + "\n", Stdout: &out, Events: &ev,
		Env:   []string{"PATH=" + h.ShownPath(DefaultPath), "HOME=" + HomePath, "QUOTED=it's \"a\" $VALUE\\n"},
		Extra: []*os.File{r}}
	st := h.Run(context.Background(), ws, size, h.Wrap(p, Mounts{Checkout: dir, Home: home, Network: network}))
	if st.StartErr != nil || st.Code != 0 || st.Limit != "" {
		t.Fatalf("expected %s's turn to complete, got %+v (said %q)", ws, st, out.String())
	}
	return out.String(), ev.String()
}

// withoutNet is a reply without its network namespace's line.
func withoutNet(reply string) string {
	before, _, _ := strings.Cut(reply, "net=")
	return before
}

// preparedFor is the workspace's prepared process, once made (nil when there is none).
func (h *Host) preparedFor(t testing.TB, ws string) *preparedTurn {
	t.Helper()
	h.prepared.mu.Lock()
	b := h.prepared.boxes[ws]
	h.prepared.mu.Unlock()
	if b != nil {
		<-b.ready
	}
	return b
}

// waitMade waits until b's sandbox is made: the shell inside waits for its turn.
func waitMade(t testing.TB, b *preparedTurn) {
	t.Helper()
	eventually.Eventually(t, 10*time.Second, "the prepared sandbox made", func() bool {
		for _, f := range b.g.procs() {
			procs, _ := os.ReadFile(f)
			for _, pid := range strings.Fields(string(procs)) {
				if cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline"); strings.Contains(string(cmd), "\x00"+preparedName+"\x00") {
					return true
				}
			}
		}
		return false
	})
}

// preparedGroups are this host's prepared sandboxes that still run: the "-next"
// groups of its scope that hold a process, each with its processes.
func (h *Host) preparedGroups(t *testing.T) map[string][]int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil || processGone(pid) {
			continue
		}
		for line := range strings.Lines(string(cg)) {
			if _, path, ok := strings.Cut(strings.TrimSpace(line), ":/"); ok && strings.Contains(path, h.scope+"-") && strings.HasSuffix(path, "-next") {
				group := path[strings.LastIndex(path, "/")+1:]
				out[group] = append(out[group], pid)
				break
			}
		}
	}
	return out
}

// A workspace's next turn runs in the process prepared when its last one ended: it is
// given what a turn made the one-off way is given (input, environment, descriptors, an
// extra descriptor's line, its events, the kept namespace), in a group holding its
// limits; a turn of another size ends it and runs the one-off way.
func TestPreparedProcessRunsTheWorkspacesNextTurnAsTheOneOffWayWould(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	l := newHostLayout(t)
	r := keptHost(t, l, Config{})
	h := r.Host
	small := core.ProviderSize{VCPUCount: 1, MemoryMiB: 256}
	for _, network := range []string{core.NetworkFull, core.NetworkNone} {
		ws := "ws_" + network
		before := h.prepared.taken.Load()
		first, firstEvents := preparedTurnOf(t, h, l, ws, network, small)
		b := h.preparedFor(t, ws)
		if b == nil || b.err != nil {
			t.Fatalf("%s: expected the next turn prepared once the first ended, got %+v", network, b)
		}
		waitInGroup(t, b.g, b.c.pgid) // before its turn asks
		second, secondEvents := preparedTurnOf(t, h, l, ws, network, small)
		if got := h.prepared.taken.Load() - before; got != 1 {
			t.Errorf("%s: expected the second turn run in the prepared process, %d were", network, got)
		}
		if network == core.NetworkFull {
			// Both in the workspace's kept pair.
			_, kept, _ := r.kept(ws)
			if !strings.Contains(first, "net="+kept+"\n") || !strings.Contains(second, "net="+kept+"\n") {
				t.Errorf("expected both turns in the kept namespace %s, got %q and %q", kept, first, second)
			}
		} else {
			// bubblewrap makes each turn's own.
			first, second = withoutNet(first), withoutNet(second)
		}
		if second != first || secondEvents != firstEvents {
			t.Errorf("%s: expected the prepared turn given what the one-off was:\n one-off: %q %q\nprepared: %q %q", network, first, firstEvents, second, secondEvents)
		}
		if !strings.Contains(first, "prompt=hello "+ws+" decision=approved") || !strings.Contains(first, `QUOTED=it's "a" $VALUE\n`) ||
			!strings.Contains(first, "\n0\n1\n2\n3\n4\n5\nfiles=\n") || firstEvents != "events\n" {
			t.Errorf("%s: unexpected turn: %q, events %q", network, first, firstEvents)
		}
		if !processGone(b.c.pgid) {
			t.Errorf("%s: expected the prepared process gone with its turn", network)
		}
	}

	// Another size is another limit: the process prepared for the last does not fit.
	ws := "ws_" + core.NetworkNone
	before := h.prepared.taken.Load()
	old := h.preparedFor(t, ws)
	big := core.ProviderSize{VCPUCount: 1, MemoryMiB: 512}
	preparedTurnOf(t, h, l, ws, core.NetworkNone, big)
	if h.prepared.taken.Load() != before {
		t.Errorf("expected a turn of another size run the one-off way")
	}
	eventually.Eventually(t, 10*time.Second, "the unfitting prepared process to end", func() bool { return processGone(old.c.pgid) })
	preparedTurnOf(t, h, l, ws, core.NetworkNone, big)
	if h.prepared.taken.Load() != before+1 {
		t.Errorf("expected the next turn of that size run in the process prepared for it")
	}

	// A checkout made anew is not the one the prepared sandbox binds: the turn runs the
	// one-off way, in the new checkout.
	waitMade(t, h.preparedFor(t, ws))
	dir := filepath.Join(l.data, "workspaces", ws, "checkout")
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "new-checkout"), "made anew")
	if reply, _ := preparedTurnOf(t, h, l, ws, core.NetworkNone, big); !strings.Contains(reply, "files=new-checkout,\n") {
		t.Errorf("expected the turn in the new checkout, got %q", reply)
	}
	if h.prepared.taken.Load() != before+1 {
		t.Errorf("expected a turn whose checkout was made anew run the one-off way")
	}
}

// Prepared processes stay within the count kept, and end, with their groups, when their
// workspaces go idle.
func TestPreparedProcessesStayWithinTheirBoundAndEndWhenIdle(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	l := newHostLayout(t)
	idle := 2 * time.Second
	h := keptHost(t, l, Config{KeptNetworks: 2, KeepIdle: idle}).Host
	size := core.ProviderSize{VCPUCount: 1, MemoryMiB: 256}
	var names []string
	for i := range 5 {
		ws := fmt.Sprintf("ws_%d", i)
		names = append(names, ws)
		preparedTurnOf(t, h, l, ws, core.NetworkNone, size)
		h.prepared.mu.Lock()
		n := len(h.prepared.boxes)
		h.prepared.mu.Unlock()
		if n > 2 {
			t.Errorf("expected at most 2 prepared after %s's turn, got %d", ws, n)
		}
		if groups := h.preparedGroups(t); len(groups) > 2+1 { // one being ended beside the two kept
			t.Errorf("expected at most 2 prepared sandboxes running (and one ending), got %v", groups)
		}
	}
	eventually.Eventually(t, 10*idle, "every prepared process ended once idle, with its group", func() bool {
		if len(h.preparedGroups(t)) > 0 {
			return false
		}
		for _, ws := range names {
			for _, d := range h.cgroups.dirs(turnName(h.scope, ws) + "-next") {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					return false
				}
			}
		}
		return true
	})
}

// A hub that ended without ending its prepared sandboxes (killed) leaves their groups
// empty; the next hub of the same state directory removes them as it starts.
func TestPreparedGroupsLeftByAnEndedHubAreRemovedByTheNext(t *testing.T) {
	needCgroups(t)
	t.Parallel()
	l := newHostLayout(t)
	opt := Options{StateDir: filepath.Join(l.data, "run"), Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}}}
	h := newAgentHost(t, opt, "true").Host
	preparedTurnOf(t, h, l, "ws_left", core.NetworkNone, core.ProviderSize{VCPUCount: 1, MemoryMiB: 256})
	b := h.preparedFor(t, "ws_left")
	if b == nil || b.err != nil {
		t.Fatalf("expected the next turn prepared, got %+v", b)
	}
	waitMade(t, b)
	b.c.kill() // as the hub's death ends it: its group stays, empty
	left := h.cgroups.dirs(turnName(h.scope, "ws_left") + "-next")
	for _, d := range left {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("expected the ended sandbox's group %s still there: %v", d, err)
		}
	}
	newAgentHost(t, opt, "true")
	for _, d := range left {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("expected the next hub to remove %s, stat says %v", d, err)
		}
	}
}
