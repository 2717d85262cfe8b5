package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lib/pq"
)

// Listener turns NOTIFY on its channels into wake-up signals, one connection for all
// of them. It reconnects by itself; while it is down the workers' polls carry the load.
type Listener struct {
	wake   map[string]chan struct{}
	fanout *Fanout
}

// Listen starts listening on channels until ctx ends.
func Listen(ctx context.Context, url string, log *slog.Logger, channels ...string) (*Listener, error) {
	return ListenFanout(ctx, url, log, nil, channels...)
}

// ListenFanout is Listen that also hands every notification to fanout's waiters.
func ListenFanout(ctx context.Context, url string, log *slog.Logger, fanout *Fanout, channels ...string) (*Listener, error) {
	pl := pq.NewListener(url, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && log != nil {
			log.Warn("listener", "channels", channels, "err", err)
		}
	})
	l := &Listener{wake: map[string]chan struct{}{}, fanout: fanout}
	for _, ch := range channels {
		if err := pl.Listen(ch); err != nil {
			pl.Close()
			return nil, mapErr(err)
		}
		l.wake[ch] = make(chan struct{}, 1)
	}
	go func() {
		defer pl.Close()
		for {
			var n *pq.Notification
			select {
			case <-ctx.Done():
				return
			case n = <-pl.Notify:
			}
			if n == nil { // a reconnect: wake everyone, work may have been missed
				for _, c := range l.wake {
					signal(c)
				}
				l.fanout.all()
			} else {
				if c, ok := l.wake[n.Channel]; ok {
					signal(c)
				}
				l.fanout.deliver(n.Channel, n.Extra)
			}
		}
	}()
	return l, nil
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// On returns a waker for one channel (a jobs.Waker).
func (l *Listener) On(channel string) Waker { return Waker(l.wake[channel]) }

// Waker signals that work may be waiting on one channel.
type Waker <-chan struct{}

// Wake returns the signal channel.
func (w Waker) Wake() <-chan struct{} { return w }

// Fanout hands notifications to any number of waiters, each waiting for one channel
// and payload (a remote runtime's long poll waits for its workspace id). It is a
// core.Wakeups; a nil *Fanout delivers nothing.
type Fanout struct {
	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
}

// NewFanout returns a Fanout with no waiters.
func NewFanout() *Fanout { return &Fanout{waiters: map[string]map[chan struct{}]struct{}{}} }

// Wait registers a waiter for (channel, key); stop removes it.
func (f *Fanout) Wait(channel, key string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	k := channel + "\x00" + key
	f.mu.Lock()
	if f.waiters[k] == nil {
		f.waiters[k] = map[chan struct{}]struct{}{}
	}
	f.waiters[k][c] = struct{}{}
	f.mu.Unlock()
	return c, func() {
		f.mu.Lock()
		delete(f.waiters[k], c)
		if len(f.waiters[k]) == 0 {
			delete(f.waiters, k)
		}
		f.mu.Unlock()
	}
}

func (f *Fanout) deliver(channel, key string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.waiters[channel+"\x00"+key] {
		signal(c)
	}
}

// all wakes every waiter: after a reconnect, notifications may have been missed.
func (f *Fanout) all() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, set := range f.waiters {
		for c := range set {
			signal(c)
		}
	}
}
