package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/wshub/wshub/core"
)

// DeliveryObserver records delivery attempts (Prometheus in production).
type DeliveryObserver interface {
	ObserveDelivery(r core.DeliveryReport, took time.Duration)
}

// Deliveries sends webhook deliveries: it claims due ones with a lease (FOR UPDATE
// SKIP LOCKED, so replicas share the queue), sends each outside any transaction with
// bounded concurrency, and settles it under the lease. NOTIFY from the outbox wakes
// it; the poll picks up retries as they fall due and anything a lost NOTIFY left.
type Deliveries struct {
	Core     DeliveriesCore
	Waker    Waker
	Log      *slog.Logger
	Observer DeliveryObserver
	// Concurrency bounds attempts in flight (default 16): enough to keep a slow
	// endpoint from holding up the others, few enough not to flood receivers.
	Concurrency int
	// LeaseFor is how long a claim lasts (default 1 min). It must exceed the 10-second
	// attempt limit, or a slow attempt would be claimed twice.
	LeaseFor time.Duration
	// Poll is the backstop interval (default 1 s); it also bounds how late a retry
	// starts after it falls due.
	Poll time.Duration
}

func (d *Deliveries) defaults() {
	if d.Concurrency <= 0 {
		d.Concurrency = 16
	}
	if d.LeaseFor <= 0 {
		d.LeaseFor = time.Minute
	}
	if d.Poll <= 0 {
		d.Poll = time.Second
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight; those cut short
// are released (due again at once), not counted.
func (d *Deliveries) Run(ctx context.Context) {
	d.defaults()
	claimLoop(ctx, d.Concurrency, d.Waker, core.DeliveryChannel, d.Poll, func(free int) []*core.DeliveryJob {
		jobs, err := d.Core.ClaimDeliveries(ctx, d.LeaseFor, free)
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("claim deliveries", "err", err) // fail open: the next poll retries
		}
		return jobs
	}, func(j *core.DeliveryJob) { d.attempt(ctx, j) })
}

func (d *Deliveries) attempt(ctx context.Context, j *core.DeliveryJob) {
	start := time.Now()
	rep, err := d.Core.AttemptDelivery(ctx, j)
	if err != nil {
		// The attempt happened but its result was not stored: the lease expires and
		// the delivery is attempted again (at least once).
		d.Log.Warn("settle delivery", "delivery", j.ID, "err", err)
		return
	}
	if d.Observer != nil {
		d.Observer.ObserveDelivery(rep, time.Since(start))
	}
	switch rep.Outcome {
	case core.DeliveryGivenUp:
		d.Log.Warn("webhook delivery given up", "delivery", j.ID, "event", j.EventID, "webhook", j.WebhookID,
			"attempts", rep.Attempt, "last_error", rep.Result.Error)
	case core.DeliveryRetrying:
		d.Log.Info("webhook attempt failed", "delivery", j.ID, "attempt", rep.Attempt, "error", rep.Result.Error)
	}
}
