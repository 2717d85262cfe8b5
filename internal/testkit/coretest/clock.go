package coretest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/core"
)

// Clock is core's clock in a test: it starts at the real time (so that rows the
// database dates itself and rows core dates agree at first) and moves only when the
// test advances it.
type Clock struct {
	mu   sync.Mutex
	now  time.Time
	wake *wakeups
}

func newClock(w *wakeups) *Clock {
	return &Clock{now: time.Now().Truncate(time.Millisecond), wake: w}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward and wakes every wait of core: what it waits for
// may be due now (an approval's expiry), and its timers run on real time.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	c.wake.all()
}

// wakeups are core's Wakeups: the NOTIFYs of the test's database (a LISTEN connection
// and the hub's own Fanout), and a wake of every waiter when the clock moves.
type wakeups struct {
	fanout *postgres.Fanout
	mu     sync.Mutex
	ticks  map[chan struct{}]struct{}
}

var _ core.Wakeups = (*wakeups)(nil)

// listen starts a LISTEN connection on the database at url for t's life.
func listen(t testing.TB, url string) *wakeups {
	t.Helper()
	w := &wakeups{fanout: postgres.NewFanout(), ticks: map[chan struct{}]struct{}{}}
	l, err := postgres.Listen(url, nil, w.fanout, core.WorkChannel, core.EventsChannel, core.StopChannel, core.ApprovalChannel)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// Wait is the Fanout's wait, also signalled by the clock's moves.
func (w *wakeups) Wait(channel, key string) (<-chan struct{}, func()) {
	notified, stopNotified := w.fanout.Wait(channel, key)
	c, done := make(chan struct{}, 1), make(chan struct{})
	w.mu.Lock()
	w.ticks[c] = struct{}{}
	w.mu.Unlock()
	go func() {
		for {
			select {
			case <-notified:
				signal(c)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return c, func() {
		once.Do(func() {
			stopNotified()
			close(done)
			w.mu.Lock()
			delete(w.ticks, c)
			w.mu.Unlock()
		})
	}
}

// all wakes every waiter.
func (w *wakeups) all() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.ticks {
		signal(c)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
