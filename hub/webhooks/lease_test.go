package webhooks_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// A worker that cannot renew its lease for a whole lease stops its turn and records
// nothing: the claim that takes over once the store is back ends the turn interrupted
// and goes on with the queue.
func TestWorkerWhoseRenewalsFailLosesTheClaimAndDoesNotRecord(t *testing.T) {
	t.Parallel()
	// Each renewal may take a third of the lease: at 2 s, two of these tests lost
	// their leases together when a loaded machine's database stalled for a second.
	const leaseFor = 3 * time.Second
	h, px := hubtest.StartBehindProxy(t, leaseFor)
	id, checkout := startWaitingTurn(t, h)
	px.Cut()
	time.Sleep(2*leaseFor + time.Second) // sleep: the outage outlasts the lease while the agent is still at work
	px.Restore()
	// Had the first worker kept going, its agent would now answer.
	hubtest.Touch(t, filepath.Join(checkout, ".go"))
	hubtest.WaitFor(t, h, id, "both turns answered", hubtest.IdleAfterTurns(2))
	// A late record by the first worker would come before a third turn's answer.
	hubtest.Send(t, h, id, "after")
	hubtest.WaitFor(t, h, id, "the third turn answered", hubtest.IdleAfterTurns(3))
	got := hubtest.Replies(t, h, id)
	if len(got) != 3 || !strings.HasPrefix(got[0], "interrupted: ") || strings.Contains(got[0], "reply: wait") ||
		got[1] != "completed: reply: next" || got[2] != "completed: reply: after" {
		t.Fatalf("expected the first turn ended interrupted by the claim that took over and the second answered, got %q", got)
	}
	if _, err := os.Stat(filepath.Join(checkout, ".started")); err != nil {
		t.Fatalf("expected the first agent stopped before it saw .go (its .started left behind), stat says %v", err)
	}
}

// Leases are judged by the database's clock only: a hub whose clock stands still (far
// behind the database's) keeps its claim through a turn longer than the lease, and the
// turn is recorded once.
func TestLeaseFollowsTheDatabaseClock(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithClock(hubtest.NewClock()),
		hubtest.WithAgentCommand("agent_1", hubtest.WaitingAgent),
		// Each renewal may take a third of the lease: at 600 ms, and once at 2 s, a
		// busy machine's database was slower than that, and the lease was lost for
		// want of it.
		hubtest.WithConfig(func(c *hub.Config) { c.LeaseFor = 3 * time.Second }))
	id := hubtest.CreateWorkspace(t, h, "wait for it")
	checkout := filepath.Join(h.Config.DataDir, "workspaces", id, "checkout")
	hubtest.WaitForFile(t, filepath.Join(checkout, ".started"))
	time.Sleep(7 * time.Second) // sleep: a turn that lasts several leases by the database's clock is the case under test
	hubtest.Touch(t, filepath.Join(checkout, ".go"))
	hubtest.WaitFor(t, h, id, "one turn answered", hubtest.IdleAfterTurns(1))
	// A second record of the first turn would come before a second turn's answer.
	hubtest.Send(t, h, id, "after")
	hubtest.WaitFor(t, h, id, "the second turn answered", hubtest.IdleAfterTurns(2))
	if got := strings.Join(hubtest.Replies(t, h, id), "|"); got != "completed: reply: wait for it|completed: reply: after" {
		t.Fatalf("expected the turn completed once by the worker that ran it, got %q", got)
	}
}

// A webhook attempt in flight keeps its claim when the hub's clock jumps ahead: the
// delivery is not claimed and sent a second time.
func TestDeliveryLeaseFollowsTheDatabaseClock(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.StartDelivering(t, hubtest.WithClock(clock))
	inFlight, release := make(chan struct{}), make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // a failing test does not leave the receiver blocked
	var first atomic.Bool
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		if first.CompareAndSwap(false, true) {
			close(inFlight)
			<-release
		}
		w.WriteHeader(204)
	})
	hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "hello")
	<-inFlight
	clock.Advance(2 * time.Hour) // far past the hub's idea of the lease
	quiet(t, rc, 1, "while the first attempt is in flight")
	unblock()
	if d := settled(t, h, h.Account.ID, 1); d.Status != core.DeliveryDelivered || d.Attempts != 1 {
		t.Fatalf("expected delivered on the one attempt, got %+v", d)
	}
	quiet(t, rc, 1, "after the attempt settled")
}

// blockingPoster posts notices only when released, and counts the posts begun.
type blockingPoster struct {
	started chan struct{}
	release chan struct{}
	posts   atomic.Int32
}

func (p *blockingPoster) PostReply(ctx context.Context, r core.ChatReply) core.ChatPostResult {
	return core.ChatPostResult{Done: true, PartsPosted: 1}
}

func (p *blockingPoster) PostNotice(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	if p.posts.Add(1) == 1 {
		close(p.started)
		<-p.release
	}
	return core.ChatPostResult{Done: true, PartsPosted: 1}
}

// A chat event being handled, and a notice being posted, keep their claims when the
// hub's clock jumps ahead: neither is taken a second time.
func TestChatLeasesFollowTheDatabaseClock(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.Start(t, hubtest.WithClock(clock)) // no workers: the test drives the queues
	ctx := context.Background()
	place := core.ChatPlace{Platform: core.PlatformSlack, TeamID: "T1", ChannelID: "C1", ThreadID: "1.1"}
	if _, err := h.Service.Chat.AcceptChatEvent(ctx, core.ChatArrival{Platform: core.PlatformSlack, EventID: "Ev1", ThreadKey: "T1/C1/1.1", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}

	entered, release := make(chan struct{}), make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // a failing test does not leave the handler blocked
	var handled atomic.Int32
	handlers := map[string]core.ChatEventHandler{core.PlatformSlack: func(ctx context.Context, payload []byte) ([]core.ChatNotice, error) {
		if handled.Add(1) == 1 {
			close(entered)
			<-release
		}
		return []core.ChatNotice{{Place: place, Kind: core.NoticeText, Text: "answer"}}, nil
	}}
	first := make(chan []core.ChatEventReport, 1)
	go func() {
		reps, err := h.Service.ChatQueues.HandleChatEvents(ctx, time.Minute, 1, handlers)
		if err != nil {
			t.Errorf("handle chat events: %v", err)
		}
		first <- reps
	}()
	<-entered
	clock.Advance(2 * time.Hour)
	if reps, err := h.Service.ChatQueues.HandleChatEvents(ctx, time.Minute, 1, handlers); err != nil || len(reps) != 0 || handled.Load() != 1 {
		t.Fatalf("expected the event in hand not claimed again, got %v, %v and %d handlings", reps, err, handled.Load())
	}
	unblock()
	if reps := <-first; len(reps) != 1 || reps[0].Status != "done" {
		t.Fatalf("expected the event handled once, got %+v", reps)
	}

	poster := &blockingPoster{started: make(chan struct{}), release: make(chan struct{})}
	unpost := sync.OnceFunc(func() { close(poster.release) })
	t.Cleanup(unpost)
	posters := map[string]core.ChatPoster{core.PlatformSlack: poster}
	posted := make(chan []core.ChatPostReport, 1)
	go func() {
		reps, err := h.Service.ChatQueues.PostChatNotices(ctx, time.Minute, 1, posters)
		if err != nil {
			t.Errorf("post chat notices: %v", err)
		}
		posted <- reps
	}()
	<-poster.started
	clock.Advance(2 * time.Hour)
	if reps, err := h.Service.ChatQueues.PostChatNotices(ctx, time.Minute, 1, posters); err != nil || len(reps) != 0 || poster.posts.Load() != 1 {
		t.Fatalf("expected the notice in hand not claimed again, got %v, %v and %d posts", reps, err, poster.posts.Load())
	}
	unpost()
	if reps := <-posted; len(reps) != 1 || reps[0].Status != core.DeliveryDelivered {
		t.Fatalf("expected the notice posted once, got %+v", reps)
	}
}
