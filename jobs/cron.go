package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/wshub/wshub/core"
)

// Sweeps schedules the periodic sweeps with robfig/cron. Every replica schedules
// them; core runs each (job, tick) once across replicas.
type Sweeps struct {
	Service   *core.Service
	Lifecycle core.LifecycleConfig
	Log       *slog.Logger
	// Every is the sweep interval (default 30 s); ticks are aligned to it, so
	// replicas agree on the tick they compete for.
	Every time.Duration
}

// Run schedules the sweeps until ctx ends.
func (s *Sweeps) Run(ctx context.Context) error {
	if s.Every <= 0 {
		s.Every = 30 * time.Second
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	c := cron.New(cron.WithSeconds())
	spec := "@every " + s.Every.String()
	if _, err := c.AddFunc(spec, func() { s.runOnce(ctx, time.Now()) }); err != nil {
		return err
	}
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
}

// runOnce runs every sweep for the tick that contains now.
func (s *Sweeps) runOnce(ctx context.Context, now time.Time) {
	tick := now.Truncate(s.Every)
	if moved, err := s.Service.SweepLifecycle(ctx, s.Lifecycle, tick); err != nil {
		s.Log.Warn("lifecycle sweep", "err", err) // fail open: the next tick runs it again
	} else if moved > 0 {
		s.Log.Info("lifecycle sweep", "moved", moved)
	}
	if expired, failed, err := s.Service.SweepMessages(ctx, tick); err != nil {
		s.Log.Warn("message sweep", "err", err)
	} else if expired+failed > 0 {
		s.Log.Info("message sweep", "expired", expired, "failed", failed)
	}
}
