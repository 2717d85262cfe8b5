package core

import (
	"context"
	"time"
)

// Every wait in the hub (an approval's decision, a runtime's next turn or stop
// request, a running turn's stop, an event feed's new rows) is the same loop: look at
// the store, then sleep until a NOTIFY for the key wakes it or the poll interval
// passes, and end at a deadline or with the context. The NOTIFY is the quick way; the
// poll is the backstop for a LISTEN connection that is down or lost a notification
// (after a reconnect every waiter is woken, and looks). This is that loop, once.

// watch is one wait's wake-ups: the NOTIFYs of one (channel, key), an optional kick
// from inside the process, and the poll.
type watch struct {
	wake <-chan struct{} // nil: no wake-ups, the poll only
	kick <-chan struct{} // nil: none
	stop func()
	poll time.Duration
}

// watchKey begins watching (channel, key) on w (nil: poll only), before the first
// look, so that nothing notified from then on is missed. Close ends it.
func watchKey(w Wakeups, channel, key string, poll time.Duration) *watch {
	wt := &watch{stop: func() {}, poll: poll}
	if w != nil {
		wt.wake, wt.stop = w.Wait(channel, key)
	}
	return wt
}

// Close stops the wake-ups.
func (w *watch) Close() { w.stop() }

// noDeadline: wait until done or the context ends.
var noDeadline time.Time

// until calls look at once, then after every wake-up or poll, until it reports done,
// ctx ends (ctx.Err()), or deadline passes (done false, no error; the zero time is no
// deadline). look may ask to be called again sooner than the poll (an expiry due, a
// retry after a failed read) by returning a positive sooner.
func (w *watch) until(ctx context.Context, deadline time.Time, look func() (done bool, sooner time.Duration, err error)) (bool, error) {
	t := time.NewTimer(w.poll)
	defer t.Stop()
	for {
		done, sooner, err := look()
		if err != nil || done {
			return done, err
		}
		nap := w.poll
		if sooner > 0 {
			nap = min(nap, sooner)
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return false, nil
			}
			nap = min(nap, left)
		}
		t.Reset(nap)
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-w.wake:
		case <-w.kick:
		case <-t.C:
		}
	}
}

// deadlineIn is the deadline of a wait of d from now: d < 0 is none, and d == 0 is
// now (look once).
func deadlineIn(d time.Duration) time.Time {
	if d < 0 {
		return noDeadline
	}
	return time.Now().Add(d)
}
