package webhooks_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// startWaitingTurn creates a workspace whose first turn waits for .go, queues a
// second message behind it, and returns the workspace and its checkout once the agent
// is waiting.
func startWaitingTurn(t *testing.T, h *hubtest.Hub) (id, checkout string) {
	t.Helper()
	id = hubtest.CreateWorkspace(t, h, "wait for it")
	checkout = filepath.Join(h.Config.DataDir, "workspaces", id, "checkout")
	hubtest.WaitForFile(t, filepath.Join(checkout, ".started"))
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "next"}).Expect(t, 200, "")
	return id, checkout
}

// waitForGone waits for the agent to remove path (a minute at most).
func waitForGone(t *testing.T, path string) {
	t.Helper()
	eventually.Eventually(t, time.Minute, path+" removed", func() bool {
		_, err := os.Stat(path)
		return os.IsNotExist(err)
	})
}

// expectPromptly waits for two turns answered after the store came back at restored,
// and fails unless they came sooner than within (a lease later would mean the reply
// was lost and the workspace recovered only when its lease ran out).
func expectPromptly(t *testing.T, h *hubtest.Hub, id string, restored time.Time, within time.Duration) {
	t.Helper()
	hubtest.WaitFor(t, h, id, "both turns answered", hubtest.IdleAfterTurns(2))
	if took := time.Since(restored); took >= within {
		t.Fatalf("expected both turns answered within %s of the database coming back, took %s", within, took.Round(time.Millisecond))
	}
}

// The database goes away while the agent works and comes back before the lease runs
// out: the reply is recorded completed, once, when the store is back, and the message
// queued behind it runs at once.
func TestStoreOutageShorterThanTheLeaseKeepsTheReply(t *testing.T) {
	t.Parallel()
	const leaseFor, outage = 30 * time.Second, 3 * time.Second
	h, px := hubtest.StartBehindProxy(t, leaseFor)
	id, checkout := startWaitingTurn(t, h)
	px.Cut()
	hubtest.Touch(t, filepath.Join(checkout, ".go")) // the agent answers while the database is away
	time.Sleep(outage)                               // sleep: how long the database is away, not a wait for an event
	restored := time.Now()
	px.Restore()
	// Whatever the machine's speed, sooner than the lease would run out.
	expectPromptly(t, h, id, restored, leaseFor-outage)
	want := "completed: reply: wait for it|completed: reply: next"
	if got := strings.Join(hubtest.Replies(t, h, id), "|"); got != want {
		t.Fatalf("expected the replies %q, each once, got %q", want, got)
	}
}

// The database stays away longer than the lease: the worker lets the claim go, keeps
// the finished result, and the next claim records it as it was (not "interrupted"),
// then goes on with the queue.
func TestStoreOutageLongerThanTheLeaseKeepsTheReply(t *testing.T) {
	t.Parallel()
	// Long enough for the agent to answer within the lease on a busy machine: the
	// turn must end before the worker gives up its claim.
	const leaseFor = 5 * time.Second
	h, px := hubtest.StartBehindProxy(t, leaseFor)
	id, checkout := startWaitingTurn(t, h)
	px.Cut()
	cut := time.Now()
	hubtest.Touch(t, filepath.Join(checkout, ".go"))
	waitForGone(t, filepath.Join(checkout, ".go")) // the agent has answered
	// The outage outlasts the lease: that is the case under test.
	time.Sleep(time.Until(cut.Add(2*leaseFor + time.Second))) // sleep: the outage's length
	px.Restore()
	hubtest.WaitFor(t, h, id, "both turns answered", hubtest.IdleAfterTurns(2))
	want := "completed: reply: wait for it|completed: reply: next"
	if got := strings.Join(hubtest.Replies(t, h, id), "|"); got != want {
		t.Fatalf("expected the replies %q, each once, got %q", want, got)
	}
	if log := hubtest.Git(t, checkout, "log", "--format=%B"); strings.Count(log, "wshub turn ") != 2 {
		t.Fatalf("expected a commit for each turn (the first made by the claim that recorded it), got %q", log)
	}
}
