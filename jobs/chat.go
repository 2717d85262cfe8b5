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
	Service  *core.Service
	Handlers map[string]core.ChatEventHandler
	Posters  map[string]core.ChatPoster
	Events   Waker
	Replies  Waker
	Log      *slog.Logger
	Observer ChatObserver
	// Concurrency is the workers per queue (default 4): threads are handled side by
	// side, each thread's events and replies in order.
	Concurrency int
	// LeaseFor bounds one event's handling or one reply's posting (default 2 min).
	LeaseFor time.Duration
	// Poll is the backstop interval (default 1 s).
	Poll time.Duration
}

// Run works until ctx ends.
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
	if c.Log == nil {
		c.Log = slog.Default()
	}
	var wg sync.WaitGroup
	for i := 0; i < c.Concurrency; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			c.drain(ctx, c.Events, "chat events", func() (int, error) {
				reps, err := c.Service.HandleChatEvents(ctx, c.LeaseFor, 1, c.Handlers)
				for _, r := range reps {
					if c.Observer != nil && !r.Released {
						c.Observer.ObserveChatEvent(r)
					}
				}
				return len(reps), err
			})
		}()
		go func() {
			defer wg.Done()
			c.drain(ctx, c.Replies, "chat replies", func() (int, error) {
				reps, err := c.Service.PostChatReplies(ctx, c.LeaseFor, 1, c.Posters)
				if err == nil {
					var more []core.ChatPostReport
					more, err = c.Service.PostChatNotices(ctx, c.LeaseFor, 1, c.Posters)
					reps = append(reps, more...)
				}
				for _, r := range reps {
					if c.Observer != nil && !r.Released {
						c.Observer.ObserveChatPost(r)
					}
				}
				return len(reps), err
			})
		}()
	}
	wg.Wait()
}

// drain takes work one item at a time until none is due, then waits for a wake-up or
// the poll.
func (c *Chat) drain(ctx context.Context, w Waker, what string, take func() (int, error)) {
	var wake <-chan struct{}
	if w != nil {
		wake = w.Wake()
	}
	poll := time.NewTicker(c.Poll)
	defer poll.Stop()
	for {
		for ctx.Err() == nil {
			n, err := take()
			if err != nil && ctx.Err() == nil {
				c.Log.Warn(what, "err", err) // fail open: the next poll retries
			}
			if n == 0 || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
		}
	}
}
