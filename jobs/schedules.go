package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/wshub/wshub/core"
)

// Schedules runs the schedules' ticks on every replica; core runs each tick once
// across them. A pass runs at the earliest schedule's next tick, and at least every
// Every, which is how a replica learns of a schedule made on another.
type Schedules struct {
	Core SchedulesCore
	Log  *slog.Logger
	// Every bounds the wait between passes (default 15 s).
	Every time.Duration
	// Wake, when set, starts a pass when a schedule is made or changed anywhere
	// (core.ScheduleChannel).
	Wake Waker
}

// Run runs passes until ctx ends.
func (s *Schedules) Run(ctx context.Context) error {
	if s.Every <= 0 {
		s.Every = 15 * time.Second
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	var changed <-chan struct{}
	if s.Wake != nil {
		c, stop := s.Wake.Wait(core.ScheduleChannel, "")
		defer stop()
		changed = c
	}
	for {
		if n, err := s.Core.RunDueSchedules(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("schedule runs", "recorded", n, "err", err) // fail open: the tick stays due for the next pass
		} else if n > 0 {
			s.Log.Info("schedule runs", "recorded", n)
		}
		t := time.NewTimer(s.wait(ctx))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-changed:
			t.Stop()
		case <-t.C:
		}
	}
}

// wait is the time until the earliest next tick, within [1 s, Every].
func (s *Schedules) wait(ctx context.Context) time.Duration {
	next, err := s.Core.NextScheduleTick(ctx)
	if err != nil || next.IsZero() {
		return s.Every
	}
	// At least a second: a tick another replica holds stays due until it commits, and
	// a store that fails keeps it due.
	return min(max(time.Until(next), time.Second), s.Every)
}
