package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/lib/pq"
)

// Listener turns NOTIFY on its channels into wake-up signals, one connection for all
// of them. It reconnects by itself; while it is down the workers' polls carry the load.
type Listener struct {
	wake map[string]chan struct{}
}

// Listen starts listening on channels until ctx ends.
func Listen(ctx context.Context, url string, log *slog.Logger, channels ...string) (*Listener, error) {
	pl := pq.NewListener(url, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && log != nil {
			log.Warn("listener", "channels", channels, "err", err)
		}
	})
	l := &Listener{wake: map[string]chan struct{}{}}
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
			} else if c, ok := l.wake[n.Channel]; ok {
				signal(c)
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
