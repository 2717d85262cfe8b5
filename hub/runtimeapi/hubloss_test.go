package runtimeapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/wsruntime"
)

// Runtimes that lose their hub: one that reaches no hub for WSHUB_RUNTIME_HUB_LOST_AFTER
// stops its turn, keeps the turn's work in a commit on its disk, and exits saying why;
// the hub, back, starts it again and the work reaches the branch. One whose hub comes
// back within the setting goes on as if nothing happened. The setting is 2 to 4 s here.

// lostLines are the runtime log's lines that say it gave up on its hub.
func lostLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "has been unreachable for") {
			out = append(out, l)
		}
	}
	return out
}

// expectLostLine fails unless the log says, in one line, that the hub at hubURL was
// unreachable for longer than the setting, naming it.
func expectLostLine(t *testing.T, log, hubURL, setting string) {
	t.Helper()
	lines := lostLines(log)
	if len(lines) == 0 {
		t.Fatalf("expected a line saying the hub was lost, got:\n%s", log)
	}
	for _, want := range []string{`"level":"ERROR"`, "the hub at " + hubURL + " has been unreachable for ",
		"longer than WSHUB_RUNTIME_HUB_LOST_AFTER (" + setting + ")"} {
		if !strings.Contains(lines[0], want) {
			t.Fatalf("expected the line to say %q, got %s", want, lines[0])
		}
	}
}

// waitHolding waits until the agent's hold runs (want) or is gone (!want).
func waitHolding(t *testing.T, secs string, want bool) {
	t.Helper()
	eventually.Eventually(t, time.Minute, fmt.Sprintf("the agent's sleep %s running: %v", secs, want),
		func() bool { return hubtest.AgentSleeping(secs) == want })
}

// expectKept fails unless the branch in dir has the held turn's commit with file.txt.
func expectKept(t *testing.T, dir, branch, prompt, file string) {
	t.Helper()
	if got := hubtest.Git(t, dir, "log", "-1", "--format=%s", branch); got != prompt {
		t.Fatalf("expected the turn's commit %q on %s in %s, got %q", prompt, branch, dir, got)
	}
	if got := hubtest.Git(t, dir, "show", branch+":"+file+".txt"); got != file {
		t.Fatalf("expected %s.txt kept on %s in %s, got %q", file, branch, dir, got)
	}
}

func TestRuntimeThatLosesItsHubStopsItsTurnKeepsItsWorkAndIsStartedAgain(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, fakeMachine(t))
	h.SetProjectNetwork(core.NetworkNone)
	front := hubtest.NewTCPProxy(t)
	front.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	hubURL := "http://" + front.Addr()
	id := hubtest.CreateOn(t, h, "process", "hold kept 4711")
	dir := filepath.Join(h.Config.DataDir, "machines", id)
	token := machineToken(t, h, id)
	rt := startInProcessRuntime(t, hubURL, token, dir, 2*time.Second)
	ws := hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	branch := ws["branch"].(string)
	waitHolding(t, "4711", true)

	front.Cut() // the hub is gone, and does not come back in time
	if err := rt.wait(t, time.Minute); !errors.Is(err, wsruntime.ErrHubLost) {
		t.Fatalf("expected Run to end with ErrHubLost, got %v", err)
	}
	expectLostLine(t, rt.log.String(), hubURL, "2s")
	waitHolding(t, "4711", false)
	expectKept(t, filepath.Join(dir, "checkout"), branch, "hold kept 4711", "kept")

	// The hub is back: its sweep finds the runtime silent and revokes it, and the
	// worker starts the machine again for the message waiting.
	front.Restore()
	hubtest.Send(t, h, id, "after")
	n, err := h.Service.Sweeps.SweepRuntimes(context.Background(),
		core.RuntimeSweepConfig{OfflineAfter: time.Nanosecond, StartTimeout: time.Hour}, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("expected the sweep to revoke the silent runtime, got %d, %v", n, err)
	}
	eventually.Eventually(t, time.Minute, "the worker to start the machine again with a new token", func() bool {
		next := machineToken(t, h, id)
		changed := next != token
		token = next
		return changed
	})
	startInProcessRuntime(t, hubURL, token, dir, 2*time.Second)
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	got := hubtest.Replies(t, h, id)
	if len(got) != 2 || !strings.HasPrefix(got[0], "interrupted: ") || got[1] != "completed: echo: after" {
		t.Fatalf("expected the lost turn interrupted and the next answered, got %q", got)
	}
	// The kept work went up with the next turn's upload.
	expectKept(t, filepath.Join(h.Config.DataDir, "branches", id+".git"), branch, "hold kept 4711", "kept")
}

func TestProcessRuntimeThatLosesItsHubExitsAndIsStartedAgain(t *testing.T) {
	t.Parallel()
	front := hubtest.NewTCPProxy(t)
	hubURL := "http://" + front.Addr()
	h := hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) {
		c.RuntimeHubURL, c.RuntimeHubLostAfter = hubURL, 2*time.Second
	}))
	front.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	h.SetProjectNetwork(core.NetworkNone)
	id := hubtest.CreateOn(t, h, "process", "hold kept 4712")
	ws := hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	waitHolding(t, "4712", true)
	pid := hubtest.RuntimePID(t, h, id)
	if env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ")); err != nil ||
		!bytes.Contains(env, []byte("\x00WSHUB_RUNTIME_HUB_LOST_AFTER=2s\x00")) {
		t.Fatalf("expected the hub's setting in the runtime's environment (%v)", err)
	}

	front.Cut()
	logPath := filepath.Join(h.Config.DataDir, "machines", id, "runtime.log")
	logged := eventually.Value(t, time.Minute, "the runtime to say it lost its hub", func() (string, error) {
		b, _ := os.ReadFile(logPath)
		if len(lostLines(string(b))) == 0 {
			return "", fmt.Errorf("runtime.log: %q", b)
		}
		return string(b), nil
	})
	expectLostLine(t, logged, hubURL, "2s")
	waitHolding(t, "4712", false)
	expectKept(t, filepath.Join(h.Config.DataDir, "machines", id, "checkout"), ws["branch"].(string), "hold kept 4712", "kept")

	// The provider starts the process again (with its hub alive, nothing else would);
	// once the network is back, its hello ends the lost turn and the queue goes on.
	front.Restore()
	hubtest.Send(t, h, id, "after")
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	got := hubtest.Replies(t, h, id)
	if len(got) != 2 || !strings.HasPrefix(got[0], "interrupted: ") || got[1] != "completed: echo: after" {
		t.Fatalf("expected the lost turn interrupted and the next answered, got %q", got)
	}
	expectKept(t, filepath.Join(h.Config.DataDir, "branches", id+".git"), ws["branch"].(string), "hold kept 4712", "kept")
}

func TestRuntimeWhoseHubComesBackWithinTheSettingKeepsItsTurn(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, fakeMachine(t))
	h.SetProjectNetwork(core.NetworkNone)
	front := newOutage(t, h.URL)
	id := hubtest.CreateOn(t, h, "process", "sleep 5")
	rt := startInProcessRuntime(t, front.URL, machineToken(t, h, id), filepath.Join(h.Config.DataDir, "machines", id), 4*time.Second)
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	// Two outages of 2.5 s, each within the 4 s, together beyond it: the answers
	// between them start the count again.
	front.fail(t, 2500*time.Millisecond, rt)
	front.fail(t, 2500*time.Millisecond, rt)
	hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	hubtest.Send(t, h, id, "after")
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	if got := hubtest.Replies(t, h, id); strings.Join(got, "|") != "completed: slept 5|completed: echo: after" {
		t.Fatalf("expected the turn to run its course and the next answered, got %q", got)
	}
	select {
	case <-rt.ended:
		t.Fatalf("expected the runtime to go on, it ended: %v", rt.err)
	default:
	}
	if lines := lostLines(rt.log.String()); len(lines) != 0 {
		t.Fatalf("expected no word of a lost hub, got %q", lines)
	}
}
