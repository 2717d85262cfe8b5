package hub_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// waitingAgent is a command agent whose turn, when the prompt starts with "wait",
// marks .started in the checkout and waits until the test creates .go there. Every
// turn writes its prompt to prompt.txt (a change to commit) and answers "reply: <prompt>".
const waitingAgent = `prompt=$(cat)
case "$prompt" in wait*)
	touch .started
	while [ ! -e .go ]; do sleep 0.05; done
	rm -f .go .started ;;
esac
echo "$prompt" > prompt.txt
echo "reply: $prompt"`

// startBehindProxy runs a hub with its worker, whose database is reached through a
// proxy the test cuts, and agent_1 bound to waitingAgent.
func startBehindProxy(t *testing.T, leaseFor time.Duration, opts ...hubtest.Option) (*hubtest.Hub, *hubtest.Proxy) {
	t.Helper()
	px := hubtest.NewProxy(t)
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithJobs(), hubtest.WithStoreProxy(px),
		hubtest.WithAgentCommand("agent_1", waitingAgent),
		hubtest.WithConfig(func(c *hub.Config) { c.LeaseFor = leaseFor })}, opts...)...)
	return h, px
}

// startWaitingTurn creates a workspace whose first turn waits for .go, queues a
// second message behind it, and returns the workspace and its checkout once the agent
// is waiting.
func startWaitingTurn(t *testing.T, h *hubtest.Hub) (id, checkout string) {
	t.Helper()
	id = createWorkspace(t, h, "wait for it")
	checkout = filepath.Join(h.Config.DataDir, "workspaces", id, "checkout")
	waitForFile(t, filepath.Join(checkout, ".started"))
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "next"}).Expect(t, 200, "")
	return id, checkout
}

func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("expected %s within a minute", path)
}

// waitForGone waits for the agent to remove path (a minute at most).
func waitForGone(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("expected %s removed within a minute", path)
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replies lists the workspace's assistant messages as "outcome: text".
func replies(t *testing.T, h *hubtest.Hub, id string) []string {
	t.Helper()
	msgs, _ := messages(t, h, id)
	var out []string
	for _, m := range msgs {
		if m.Role == "assistant" {
			out = append(out, m.Outcome+": "+m.Text)
		}
	}
	return out
}

// expectPromptly waits for two turns answered after the store came back at restored,
// and fails unless they came sooner than within (a lease later would mean the reply
// was lost and the workspace recovered only when its lease ran out).
func expectPromptly(t *testing.T, h *hubtest.Hub, id string, restored time.Time, within time.Duration) {
	t.Helper()
	waitFor(t, h, id, "both turns answered", idleAfterTurns(2))
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
	h, px := startBehindProxy(t, leaseFor)
	id, checkout := startWaitingTurn(t, h)
	px.Cut()
	touch(t, filepath.Join(checkout, ".go")) // the agent answers while the database is away
	time.Sleep(outage)                       // how long the database is away, not a wait for an event
	restored := time.Now()
	px.Restore()
	// Whatever the machine's speed, sooner than the lease would run out.
	expectPromptly(t, h, id, restored, leaseFor-outage)
	want := "completed: reply: wait for it|completed: reply: next"
	if got := strings.Join(replies(t, h, id), "|"); got != want {
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
	h, px := startBehindProxy(t, leaseFor)
	id, checkout := startWaitingTurn(t, h)
	px.Cut()
	cut := time.Now()
	touch(t, filepath.Join(checkout, ".go"))
	waitForGone(t, filepath.Join(checkout, ".go")) // the agent has answered
	// The outage outlasts the lease: that is the case under test.
	time.Sleep(time.Until(cut.Add(2*leaseFor + time.Second)))
	px.Restore()
	waitFor(t, h, id, "both turns answered", idleAfterTurns(2))
	want := "completed: reply: wait for it|completed: reply: next"
	if got := strings.Join(replies(t, h, id), "|"); got != want {
		t.Fatalf("expected the replies %q, each once, got %q", want, got)
	}
	if log := hubtest.Git(t, checkout, "log", "--format=%B"); strings.Count(log, "wshub turn ") != 2 {
		t.Fatalf("expected a commit for each turn (the first made by the claim that recorded it), got %q", log)
	}
}
