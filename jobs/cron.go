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
	Core      SweepsCore
	Lifecycle core.LifecycleConfig
	// Runtimes says when a remote runtime counts as gone (zero: never).
	Runtimes core.RuntimeSweepConfig
	Log      *slog.Logger
	// Every is the sweep interval (default 30 s); ticks are aligned to it, so
	// replicas agree on the tick they compete for.
	Every time.Duration
	// Retention is how long handled rows are kept before pruning (default and minimum:
	// core.MinRetention).
	Retention time.Duration
	// HostLostAfter: a host not seen this long is lost, and its local workspaces fail
	// (zero: never).
	HostLostAfter time.Duration
}

// pruneEvery spaces retention sweeps: rows live for weeks, so pruning hourly keeps the
// backlog small without deleting on every tick.
const pruneEvery = time.Hour

// Run schedules the sweeps until ctx ends.
func (s *Sweeps) Run(ctx context.Context) error {
	if s.Every <= 0 {
		s.Every = 30 * time.Second
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	if s.Retention <= 0 {
		s.Retention = core.MinRetention
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
	if moved, err := s.Core.SweepLifecycle(ctx, s.Lifecycle, tick); err != nil {
		s.Log.Warn("lifecycle sweep", "err", err) // fail open: the next tick runs it again
	} else if moved > 0 {
		s.Log.Info("lifecycle sweep", "moved", moved)
	}
	if n, err := s.Core.SweepRuntimes(ctx, s.Runtimes, tick); err != nil {
		s.Log.Warn("runtime sweep", "err", err)
	} else if n > 0 {
		s.Log.Info("runtime sweep: runtimes not heard from are started again", "runtimes", n)
	}
	// Not once per tick across replicas like the others: every replica's sweep may run
	// it, as each workspace is failed under its row's lock, once.
	if failed, released, err := s.Core.SweepLostHosts(ctx, s.HostLostAfter); err != nil {
		s.Log.Warn("lost host sweep", "err", err) // fail open: the next tick runs it again
	} else if failed+released > 0 {
		s.Log.Warn("lost host sweep: local workspaces of hosts not seen failed or let go", "failed", failed, "released", released)
	}
	if expired, failed, err := s.Core.SweepMessages(ctx, tick); err != nil {
		s.Log.Warn("message sweep", "err", err)
	} else if expired+failed > 0 {
		s.Log.Info("message sweep", "expired", expired, "failed", failed)
	}
	// Retention rides on every tick but competes for the hour's tick: the first sweep
	// of each hour on any replica claims it and prunes, the rest find it taken (one
	// small transaction). Unlike a separate "@every 1h" entry, which counts from each
	// process's start, this needs no second schedule and a hub restarted more often
	// than hourly still prunes. It runs last so a long first prune delays no sweep.
	if p, err := s.Core.SweepRetention(ctx, s.Retention, now.Truncate(pruneEvery)); err != nil {
		s.Log.Warn("retention sweep", "err", err) // fail open: the next hour's tick prunes again
	} else if p.Total() > 0 {
		s.Log.Info("retention sweep", "pruned", p) // every table's count, whatever tables are added
	}
}
