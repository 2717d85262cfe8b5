package core

import (
	"context"
	"encoding/binary"
	"io"
	"time"
)

// Backoff is the one retry schedule of the hub's queues (webhook deliveries, the chat
// inbox, chat replies and notices): First after the first failed attempt, doubling up
// to Max. Jitter spreads each wait by up to that fraction, downwards, so that rows that
// failed together (an outage) do not all fall due together again.
type Backoff struct {
	First, Max time.Duration
	Jitter     float64 // 0..1
}

// The hub's schedules.
var (
	// webhookBackoff is api.md 6.4's, exactly: 30 s doubling to 1 h, no jitter (the
	// documented schedule is what receivers see).
	webhookBackoff = Backoff{First: firstRetryAfter, Max: maxRetryAfter}
	// chatEventBackoff retries a handler that failed (the platform or the store down).
	chatEventBackoff = Backoff{First: chatEventRetryAfter, Max: time.Minute, Jitter: 0.2}
	// chatPostBackoff retries a post the platform did not take, when it gave no
	// Retry-After of its own.
	chatPostBackoff = Backoff{First: 2 * time.Second, Max: 10 * time.Minute, Jitter: 0.2}
)

// Delay is the wait after the attempt-th failed attempt (attempt >= 1), jittered with
// random (nil or Jitter 0: exact).
func (b Backoff) Delay(attempt int, random io.Reader) time.Duration {
	d := b.First
	for i := 1; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if b.Jitter <= 0 || random == nil {
		return d
	}
	var buf [8]byte
	if _, err := io.ReadFull(random, buf[:]); err != nil {
		return d
	}
	frac := float64(binary.BigEndian.Uint64(buf[:])>>11) / (1 << 53) // [0, 1)
	return d - time.Duration(frac*b.Jitter*float64(d))
}

// Wait sleeps the attempt-th delay, or until ctx ends (then its error): a retry loop
// never sleeps past its cancellation.
func (b Backoff) Wait(ctx context.Context, attempt int, random io.Reader) error {
	t := time.NewTimer(b.Delay(attempt, random))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
