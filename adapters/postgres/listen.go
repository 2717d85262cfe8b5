package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/lib/pq"
)

// Listener turns NOTIFY on one channel into wake-up signals. It reconnects by itself;
// while it is down the workers' polls carry the load.
type Listener struct {
	l    *pq.Listener
	wake chan struct{}
}

// Listen starts listening on channel until ctx ends.
func Listen(ctx context.Context, url, channel string, log *slog.Logger) (*Listener, error) {
	pl := pq.NewListener(url, 100*time.Millisecond, 10*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && log != nil {
			log.Warn("listener", "channel", channel, "err", err)
		}
	})
	if err := pl.Listen(channel); err != nil {
		pl.Close()
		return nil, mapErr(err)
	}
	l := &Listener{l: pl, wake: make(chan struct{}, 1)}
	go func() {
		defer pl.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case <-pl.Notify: // nil after a reconnect: wake anyway, work may have been missed
			}
			select {
			case l.wake <- struct{}{}:
			default:
			}
		}
	}()
	return l, nil
}

// Wake signals that work may be waiting.
func (l *Listener) Wake() <-chan struct{} { return l.wake }
