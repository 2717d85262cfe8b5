package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// Fakes of the loops' needs of core and of the hub's broadcaster, for tests run in a
// synctest bubble (fake clock). They stand for core, not for the database: core's own
// tests and the hub's run the real statements.

var quiet = slog.New(slog.DiscardHandler)

// fakeWaker is the broadcaster in memory: every waiter of a channel, whatever its
// key, gets each notify of the channel.
type fakeWaker struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]bool
}

func newFakeWaker() *fakeWaker { return &fakeWaker{waiters: map[string]map[chan struct{}]bool{}} }

func (f *fakeWaker) Wait(channel, key string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiters[channel] == nil {
		f.waiters[channel] = map[chan struct{}]bool{}
	}
	f.waiters[channel][c] = true
	return c, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.waiters[channel], c)
	}
}

func (f *fakeWaker) notify(channel string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.waiters[channel] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// waiting counts the waiters of every channel.
func (f *fakeWaker) waiting() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, set := range f.waiters {
		n += len(set)
	}
	return n
}

// fakeWorkerCore hands out claims from a list and answers steps, renewals and releases
// with the test's functions, recording when each was asked for.
type fakeWorkerCore struct {
	mu      sync.Mutex
	batches [][]*core.Workspace // one per claim, then nothing
	step    func(ctx context.Context, ws *core.Workspace) (bool, error)
	renew   func(ctx context.Context) (core.WorkspaceState, bool, error)
	release func() error
	yield   bool

	claims             int
	renewals, releases []time.Time
}

func (f *fakeWorkerCore) ClaimWork(_ context.Context, _ time.Duration, limit int) ([]*core.Workspace, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	if len(f.batches) == 0 {
		return nil, nil
	}
	b := f.batches[0]
	f.batches = f.batches[1:]
	return b[:min(limit, len(b))], nil
}

func (f *fakeWorkerCore) StepWorkspace(ctx context.Context, ws *core.Workspace, _ string) (bool, error) {
	return f.step(ctx, ws)
}

func (f *fakeWorkerCore) ShouldYield(context.Context, *core.Workspace) (bool, error) {
	return f.yield, nil
}

func (f *fakeWorkerCore) RenewLease(ctx context.Context, _, _ string, _ time.Duration) (core.WorkspaceState, bool, error) {
	f.mu.Lock()
	f.renewals = append(f.renewals, time.Now())
	f.mu.Unlock()
	return f.renew(ctx)
}

func (f *fakeWorkerCore) ReleaseLease(context.Context, string, string) error {
	f.mu.Lock()
	f.releases = append(f.releases, time.Now())
	f.mu.Unlock()
	if f.release == nil {
		return nil
	}
	return f.release()
}

func (f *fakeWorkerCore) claimed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claims
}

func (f *fakeWorkerCore) renewedAt() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.renewals...)
}

func (f *fakeWorkerCore) releasedAt() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.releases...)
}

// fakeChatCore counts each queue's claims; it has nothing to hand out.
type fakeChatCore struct {
	mu     sync.Mutex
	claims map[string]int
}

func (f *fakeChatCore) claimed(queue string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claims == nil {
		f.claims = map[string]int{}
	}
	f.claims[queue]++
}

func (f *fakeChatCore) count() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for q, n := range f.claims {
		out[q] = n
	}
	return out
}

func (f *fakeChatCore) ClaimChatEvents(context.Context, time.Duration, int) ([]*core.ChatEvent, error) {
	f.claimed("events")
	return nil, nil
}

func (f *fakeChatCore) HandleChatEvent(context.Context, *core.ChatEvent, map[string]core.ChatEventHandler) (core.ChatEventReport, error) {
	return core.ChatEventReport{}, nil
}

func (f *fakeChatCore) ClaimChatReplies(context.Context, time.Duration, int) ([]*core.ClaimedChatReply, error) {
	f.claimed("replies")
	return nil, nil
}

func (f *fakeChatCore) PostChatReply(context.Context, *core.ClaimedChatReply, map[string]core.ChatPoster) (core.ChatPostReport, error) {
	return core.ChatPostReport{}, nil
}

func (f *fakeChatCore) ClaimChatNotices(context.Context, time.Duration, int) ([]*core.ClaimedChatNotice, error) {
	f.claimed("notices")
	return nil, nil
}

func (f *fakeChatCore) PostChatNotice(context.Context, *core.ClaimedChatNotice, map[string]core.ChatPoster) (core.ChatPostReport, error) {
	return core.ChatPostReport{}, nil
}

func (f *fakeChatCore) ClaimChatStatuses(context.Context, time.Duration, int) ([]*core.ClaimedChatStatus, error) {
	f.claimed("statuses")
	return nil, nil
}

func (f *fakeChatCore) PostChatStatus(context.Context, *core.ClaimedChatStatus, map[string]core.ChatPoster) (core.ChatPostReport, error) {
	return core.ChatPostReport{}, nil
}

// fakeDeliveriesCore counts claims; it has nothing to deliver.
type fakeDeliveriesCore struct {
	mu     sync.Mutex
	claims int
}

func (f *fakeDeliveriesCore) ClaimDeliveries(context.Context, time.Duration, int) ([]*core.DeliveryJob, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claims++
	return nil, nil
}

func (f *fakeDeliveriesCore) AttemptDelivery(context.Context, *core.DeliveryJob) (core.DeliveryReport, error) {
	return core.DeliveryReport{}, nil
}

func (f *fakeDeliveriesCore) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claims
}
