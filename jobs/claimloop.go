package jobs

import (
	"context"
	"sync"
	"time"
)

// claimLoop is the shape shared by the workers: claim up to the free slots, work each
// claimed item on its own goroutine, and claim again when a slot frees, when a full
// batch suggests more is waiting, on a wake-up (a NOTIFY on channel) or on the poll. It
// returns when ctx ends, after the items in hand are finished.
func claimLoop[T any](ctx context.Context, slots int, waker Waker, channel string, poll time.Duration,
	claim func(free int) []T, work func(T)) {
	busy := make(chan struct{}, slots)
	again := make(chan struct{}, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	var wake <-chan struct{}
	if waker != nil {
		// Before the first claim, so a NOTIFY between the two is not missed.
		var stop func()
		wake, stop = waker.Wait(channel, "")
		defer stop()
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	nudge := func() {
		select {
		case again <- struct{}{}:
		default:
		}
	}
	for {
		if free := slots - len(busy); free > 0 && ctx.Err() == nil {
			items := claim(free)
			for _, it := range items {
				busy <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					work(it)
					<-busy
					nudge() // a slot is free: look for more at once
				}()
			}
			if len(items) == free { // a full batch: more may be waiting
				nudge()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-again:
		case <-tick.C:
		}
	}
}
