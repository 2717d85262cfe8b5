package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/lib/pq"
)

// Listener holds one LISTEN connection for all its channels and hands every
// notification to a Fanout, the hub's one broadcaster. It reconnects by itself; while
// it is down the waiters' polls carry the load.
type Listener struct {
	pl     *pq.Listener
	fanout *Fanout
}

// Listen connects and listens on channels; Run then delivers their notifications to
// fanout, and closes the connection (the caller must run it: Run on an ended context
// only closes).
func Listen(url string, log *slog.Logger, fanout *Fanout, channels ...string) (*Listener, error) {
	pl := pq.NewListener(url, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && log != nil {
			log.Warn("listener", "channels", channels, "err", err)
		}
	})
	for _, ch := range channels {
		if err := pl.Listen(ch); err != nil {
			pl.Close()
			return nil, mapErr(err)
		}
	}
	return &Listener{pl: pl, fanout: fanout}, nil
}

// Run delivers notifications until ctx ends, then closes the connection and returns
// once pq's goroutine has stopped: it closes Notify when it stops, and it is drained
// until then, for a notification it is sending would otherwise hold it forever. That
// can take pq's longest wait between reconnections (10 s) when the database is down.
func (l *Listener) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			l.pl.Close()
			for range l.pl.Notify {
			}
			return
		case n, open := <-l.pl.Notify:
			if !open { // pq stopped by itself: nothing more will come
				return
			}
			if n == nil { // a reconnect: notifications may have been missed
				l.fanout.all()
			} else {
				l.fanout.deliver(n.Channel, n.Extra)
			}
		}
	}
}

// Fanout hands notifications to any number of waiters, each waiting for one channel
// and key: the payload a notification must carry (a remote runtime's long poll waits
// for its workspace id), or "" for every notification of the channel (the jobs' loops).
// It is a core.Wakeups, and the jobs' Waker.
type Fanout struct {
	mu      sync.Mutex
	waiters map[string]map[string]map[chan struct{}]struct{} // by channel, then key
}

// NewFanout returns a Fanout with no waiters.
func NewFanout() *Fanout {
	return &Fanout{waiters: map[string]map[string]map[chan struct{}]struct{}{}}
}

// Wait registers a waiter for (channel, key), "" meaning any key; stop removes it. The
// returned channel holds one signal: a waiter that was busy learns that something
// happened since, not how often.
func (f *Fanout) Wait(channel, key string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	f.mu.Lock()
	byKey := f.waiters[channel]
	if byKey == nil {
		byKey = map[string]map[chan struct{}]struct{}{}
		f.waiters[channel] = byKey
	}
	if byKey[key] == nil {
		byKey[key] = map[chan struct{}]struct{}{}
	}
	byKey[key][c] = struct{}{}
	f.mu.Unlock()
	return c, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.waiters[channel][key], c)
		if len(f.waiters[channel][key]) == 0 {
			delete(f.waiters[channel], key)
		}
		if len(f.waiters[channel]) == 0 {
			delete(f.waiters, channel)
		}
	}
}

// deliver wakes the waiters of (channel, key) and those of the whole channel.
func (f *Fanout) deliver(channel, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.waiters[channel][key] {
		signal(c)
	}
	if key != "" {
		for c := range f.waiters[channel][""] {
			signal(c)
		}
	}
}

// all wakes every waiter: after a reconnect, notifications may have been missed.
func (f *Fanout) all() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, byKey := range f.waiters {
		for _, set := range byKey {
			for c := range set {
				signal(c)
			}
		}
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
