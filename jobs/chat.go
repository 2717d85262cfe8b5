package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// ChatObserver records handled events and posts (Prometheus in production); posts and
// events cut short by the hub stopping are not passed on.
type ChatObserver interface {
	ObserveChatEvent(r core.ChatEventReport)
	ObserveChatPost(r core.ChatPostReport)
}

// Chat runs the chat front-ends' background work through core: the inbox (received
// platform events, handled by the bots) and the outboxes (turn replies and the hub's
// notices, posted in threads). Each is drained by a few workers woken by NOTIFY, with a poll backstop.
type Chat struct {
	Core     ChatCore
	Handlers map[string]core.ChatEventHandler
	Posters  map[string]core.ChatPoster
	// Waker wakes each queue's loop on its channel: the inbox on core.ChatEventChannel,
	// the replies and the notices both on core.ChatReplyChannel, the turn status
	// messages on core.ChatStatusChannel (a turn's change).
	Waker    Waker
	Log      *slog.Logger
	Observer ChatObserver
	// Concurrency is the workers per queue (default 4): threads are handled side by
	// side, each thread's events and replies in order.
	Concurrency int
	// LeaseFor bounds one event's handling or one reply's posting (default 2 min).
	LeaseFor time.Duration
	// Poll is the backstop interval (default 1 s).
	Poll time.Duration
	// StatusPoll is how often status messages are looked at besides wake-ups (default
	// 250 ms): an edit held back by the per-thread interval is due without a NOTIFY.
	StatusPoll time.Duration
}

// Run works until ctx ends: the inbox, the replies and the notices each on the one
// claim loop every queue of the hub uses (claimLoop), up to Concurrency items of each
// at a time. Items cut short by the hub stopping are released, not counted.
func (c *Chat) Run(ctx context.Context) {
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.LeaseFor <= 0 {
		c.LeaseFor = 2 * time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.StatusPoll <= 0 {
		c.StatusPoll = 250 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	var wg sync.WaitGroup
	wg.Add(4)
	go func() {
		defer wg.Done()
		claimLoop(ctx, c.Concurrency, c.Waker, core.ChatEventChannel, c.Poll, func(free int) []*core.ChatEvent {
			return claimedOf(c, "claim chat events", func() ([]*core.ChatEvent, error) { return c.Core.ClaimChatEvents(ctx, c.LeaseFor, free) })
		}, func(e *core.ChatEvent) {
			rep, err := c.Core.HandleChatEvent(ctx, e, c.Handlers)
			if err != nil {
				c.Log.Warn("chat events", "err", err) // the lease runs out; the event is handled again
				return
			}
			if c.Observer != nil && !rep.Released {
				c.Observer.ObserveChatEvent(rep)
			}
		})
	}()
	go func() {
		defer wg.Done()
		claimLoop(ctx, c.Concurrency, c.Waker, core.ChatReplyChannel, c.Poll, func(free int) []*core.ClaimedChatReply {
			return claimedOf(c, "claim chat replies", func() ([]*core.ClaimedChatReply, error) { return c.Core.ClaimChatReplies(ctx, c.LeaseFor, free) })
		}, func(r *core.ClaimedChatReply) {
			c.observePost(c.Core.PostChatReply(ctx, r, c.Posters))
		})
	}()
	go func() {
		defer wg.Done()
		claimLoop(ctx, c.Concurrency, c.Waker, core.ChatReplyChannel, c.Poll, func(free int) []*core.ClaimedChatNotice {
			return claimedOf(c, "claim chat notices", func() ([]*core.ClaimedChatNotice, error) { return c.Core.ClaimChatNotices(ctx, c.LeaseFor, free) })
		}, func(n *core.ClaimedChatNotice) {
			c.observePost(c.Core.PostChatNotice(ctx, n, c.Posters))
		})
	}()
	go func() {
		defer wg.Done()
		claimLoop(ctx, c.Concurrency, c.Waker, core.ChatStatusChannel, c.StatusPoll, func(free int) []*core.ClaimedChatStatus {
			return claimedOf(c, "claim chat statuses", func() ([]*core.ClaimedChatStatus, error) {
				return c.Core.ClaimChatStatuses(ctx, c.LeaseFor, free)
			})
		}, func(s *core.ClaimedChatStatus) {
			c.observePost(c.Core.PostChatStatus(ctx, s, c.Posters))
		})
	}()
	wg.Wait()
}

// claimedOf runs a claim, logging a failure (fail open: the next poll retries).
func claimedOf[T any](c *Chat, what string, claim func() ([]T, error)) []T {
	items, err := claim()
	if err != nil {
		c.Log.Warn(what, "err", err)
	}
	return items
}

func (c *Chat) observePost(rep core.ChatPostReport, err error) {
	if err != nil {
		c.Log.Warn("chat posts", "err", err) // the lease runs out; the row is posted again
		return
	}
	if c.Observer != nil && !rep.Released {
		c.Observer.ObserveChatPost(rep)
	}
}
