//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// nsAgent is a command agent that says which network namespace it runs in, and the
// listening TCP sockets it sees there (LISTEN is state 0A); given "listen", it first
// leaves a listener running behind it, which the end of its turn must take away.
const nsAgent = `read -r what
if [ "$what" = listen ]; then
	perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1:7777") or exit 1; sleep 600' &
	until grep -q ':1E61 00000000:0000 0A' /proc/net/tcp; do kill -0 $! || exit 1; done
fi
echo "$(readlink /proc/self/ns/net) $(cat /proc/net/tcp /proc/net/tcp6 | grep -c ' 0A ')"`

// keptHost is a host keeping networks as cfg says, for the workspaces of l's data
// directory, running nsAgent; its kept pairs end with the test.
func keptHost(t *testing.T, l hostLayout, cfg Config) *agentHost {
	t.Helper()
	cfg.Mode, cfg.Hidden = ModeBwrap, []string{l.data}
	r := newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"), Sandbox: cfg}, nsAgent)
	if r.keeper == nil {
		t.Fatal("expected the host to keep networks (nsenter is util-linux's, installed with the system)")
	}
	t.Cleanup(r.Close)
	return r
}

// nsTurn runs one turn of workspace ws (its own checkout and home under l) and returns
// its network namespace and how many listeners it saw.
func nsTurn(t *testing.T, r *agentHost, l hostLayout, ws, network, prompt string) (netns string, listeners int) {
	t.Helper()
	req := l.turn(network, prompt)
	req.WorkspaceID = ws
	if ws != "ws_mine" {
		req.Dir, req.Home = filepath.Join(l.data, "workspaces", ws, "checkout"), filepath.Join(l.data, "workspaces", ws, "home")
		if err := os.MkdirAll(req.Dir, 0o755); err != nil {
			t.Error(err)
			return "", 0
		}
	}
	res := r.RunTurn(context.Background(), req)
	if !res.completed() {
		t.Errorf("expected %s's turn (%s) to complete, got %+v", ws, network, res)
		return "", 0
	}
	if _, err := fmt.Sscanf(res.Reply, "%s %d", &netns, &listeners); err != nil {
		t.Errorf("unreadable reply %q: %v", res.Reply, err)
	}
	return netns, listeners
}

// kept is the workspace's kept pair (nil when none): its holder's network namespace
// and the pasta serving it.
func (r *agentHost) kept(ws string) (n *keptNet, netns string, pasta int) {
	r.keeper.mu.Lock()
	n = r.keeper.kept[ws]
	r.keeper.mu.Unlock()
	if n == nil {
		return nil, "", 0
	}
	netns, _ = os.Readlink(fmt.Sprintf("/proc/%d/ns/net", n.pid))
	if n.pasta != nil {
		pasta = n.pasta.cmd.Process.Pid
	}
	return n, netns, pasta
}

// pastasServing are the live pasta processes attached to the holders of r's pairs.
func (r *agentHost) pastasServing() []int {
	r.keeper.mu.Lock()
	holders := map[string]bool{}
	for _, n := range r.keeper.kept {
		holders[strconv.Itoa(n.pid)] = true
	}
	r.keeper.mu.Unlock()
	var out []int
	for pid, argv := range processArgs() {
		if slices.Contains(argv, "--dns-forward") && holders[argv[len(argv)-1]] && !processGone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestKeptNetworkServesTheWorkspacesNextTurnWithNothingOfTheLastLeft(t *testing.T) {
	if _, err := os.Stat("/usr/bin/perl"); err != nil {
		t.Skip("the listening agent is perl's")
	}
	t.Parallel()
	l := newHostLayout(t)
	r := keptHost(t, l, Config{})
	first, listening := nsTurn(t, r, l, "ws_mine", core.NetworkFull, "listen")
	if listening != 1 {
		t.Errorf("expected the first turn to see its own listener, got %d listening", listening)
	}
	n, holderNS, pasta := r.kept("ws_mine")
	if n == nil || first != holderNS {
		t.Fatalf("expected the turn's namespace (%s) kept for the next, its holder's, got %q", first, holderNS)
	}
	second, left := nsTurn(t, r, l, "ws_mine", core.NetworkFull, "look")
	if second != first {
		t.Errorf("expected the second turn in the first's namespace %s, got %s", first, second)
	}
	if left != 0 {
		t.Errorf("expected no listener of the first turn left for the second, got %d", left)
	}
	if again, _, pastaAgain := r.kept("ws_mine"); again != n || pastaAgain != pasta {
		t.Errorf("expected the same pair and pasta (pid %d) for the second turn, got pasta %d", pasta, pastaAgain)
	}
	if pasta == 0 || !slices.Equal(r.pastasServing(), []int{pasta}) {
		t.Errorf("expected one pasta, %d, serving the kept namespace, got %v", pasta, r.pastasServing())
	}
	// "none" keeps nothing: bubblewrap's own namespace is as cheap as entering one.
	nsTurn(t, r, l, "ws_none", core.NetworkNone, "look")
	if n, _, _ := r.kept("ws_none"); n != nil {
		t.Errorf("expected nothing kept for a turn with network none, got %v", n)
	}
}

func TestKeptNetworkIsMadeAgainWhenItsPolicyChanges(t *testing.T) {
	t.Parallel()
	l := newHostLayout(t)
	r := keptHost(t, l, Config{})
	first, _ := nsTurn(t, r, l, "ws_mine", core.NetworkFull, "look")
	_, _, oldPasta := r.kept("ws_mine")
	// What the operator's allow list opens changes what the namespace's rules are.
	r.bwrap.allow = append(slices.Clone(r.bwrap.allow), egressRule{Net: "192.0.2.10/32"})
	second, _ := nsTurn(t, r, l, "ws_mine", core.NetworkFull, "look")
	if second == first {
		t.Errorf("expected a new namespace for the new rules, got the old one, %s", first)
	}
	if _, holderNS, _ := r.kept("ws_mine"); holderNS != second {
		t.Errorf("expected the new namespace %s kept, got %q", second, holderNS)
	}
	if !processGone(oldPasta) {
		t.Errorf("expected the old namespace's pasta (%d) ended with it", oldPasta)
	}
}

// A burst across more workspaces than are kept ends every turn, and never keeps more
// than the bound: the count, or the memory budget that counts each pasta.
func TestKeptNetworksStayWithinTheirBoundThroughABurst(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"count":  {KeptNetworks: 2},
		"budget": {KeptNetworkBytes: 2 * pastaBytes},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := newHostLayout(t)
			r := keptHost(t, l, cfg)
			const workspaces, turns, clients = 5, 2, 3
			jobs := make(chan string)
			var wg sync.WaitGroup
			var mu sync.Mutex
			most, mostPastas, done := 0, 0, 0
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// A workspace's turns one after another, as the runtime runs them.
					for ws := range jobs {
						for range turns {
							if ns, _ := nsTurn(t, r, l, ws, core.NetworkFull, "look"); ns == "" {
								continue
							}
							n, used := r.keeper.count()
							pastas := len(r.pastasServing())
							mu.Lock()
							most, mostPastas, done = max(most, n), max(mostPastas, pastas), done+1
							mu.Unlock()
							if used > 2*pastaBytes {
								t.Errorf("expected at most %d bytes counted, got %d", 2*pastaBytes, used)
							}
						}
					}
				}()
			}
			for i := range workspaces {
				jobs <- fmt.Sprintf("ws_%d", i)
			}
			close(jobs)
			wg.Wait()
			if done != workspaces*turns {
				t.Errorf("expected every one of the %d turns to complete, %d did", workspaces*turns, done)
			}
			if most > 2 || mostPastas > 2 {
				t.Errorf("expected at most 2 namespaces kept and 2 pastas serving them, got %d and %d at most", most, mostPastas)
			}
			if most == 0 {
				t.Error("expected namespaces kept during the burst, got none")
			}
		})
	}
}

func TestKeptNetworkEndsWhenItsWorkspaceGoesIdle(t *testing.T) {
	t.Parallel()
	l := newHostLayout(t)
	r := keptHost(t, l, Config{KeepIdle: 100 * time.Millisecond})
	nsTurn(t, r, l, "ws_mine", core.NetworkFull, "look")
	n, _, pasta := r.kept("ws_mine")
	if n == nil || pasta == 0 {
		t.Fatalf("expected the workspace's namespace and pasta kept after its turn, got %v, pasta %d", n, pasta)
	}
	eventually.Eventually(t, 10*time.Second, "the idle workspace's namespace released", func() bool {
		kept, _ := r.keeper.count()
		return kept == 0 && processGone(pasta) && processGone(n.pid)
	})
}
