package main

// wshub admin webhook deliveries|redeliver: the operator's view of webhook deliveries.

import (
	"context"
	"flag"
	"time"

	"github.com/wshub/wshub/core"
)

func webhookDeliveries(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	status := fs.String("status", "", "only deliveries in this status: pending, delivered or failed")
	limit := &intIn{v: 100, min: 1, max: 10000}
	fs.Var(limit, "limit", "at most this many, newest first")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.Admin.ListDeliveries(ctx, *id, *status, limit.v)
		if err != nil {
			return nil, err
		}
		out := make([]deliveryOut, len(list))
		for i, d := range list {
			out[i] = deliveryOf(d)
		}
		return out, nil
	}
}

func webhookRedeliver(fs *flag.FlagSet) adminRun {
	id := fs.String("delivery", "", "delivery id")
	return func(ctx context.Context, h adminHub) (any, error) {
		d, err := h.svc.Admin.Redeliver(ctx, *id)
		if err != nil {
			return nil, err
		}
		return deliveryOf(d), nil
	}
}

// deliveryOut is a delivery for the operator: attempts, the last status code and
// error, when the next attempt is due (pending only), and the log of its newest
// attempts. attempts counts them all, so attempts minus the log's length came before
// the log's first.
type deliveryOut struct {
	AttemptLog     []attemptOut `json:"attemptLog"`
	Attempts       int          `json:"attempts"`
	CreatedAt      string       `json:"createdAt"`
	DeliveredAt    string       `json:"deliveredAt,omitempty"`
	DeliveryID     string       `json:"deliveryId"`
	EventID        string       `json:"eventId"`
	LastAttemptAt  string       `json:"lastAttemptAt,omitempty"`
	LastError      string       `json:"lastError"`
	LastStatusCode int          `json:"lastStatusCode,omitempty"` // absent: no answer yet
	MaxAttempts    int          `json:"maxAttempts"`
	NextAttemptAt  string       `json:"nextAttemptAt,omitempty"`
	Status         string       `json:"status"`
	URL            string       `json:"url"`
	WebhookID      string       `json:"webhookId"`
}

// attemptOut is one recorded attempt, as the delivery log keeps it.
type attemptOut struct {
	Attempt         int    `json:"attempt"`
	DurationMS      int64  `json:"durationMs"`
	Error           string `json:"error"`
	ResponseExcerpt string `json:"responseExcerpt"`
	StartedAt       string `json:"startedAt"`
	StatusCode      int    `json:"statusCode,omitempty"` // absent: no response arrived
}

func deliveryOf(d *core.Delivery) deliveryOut {
	out := deliveryOut{DeliveryID: d.ID, WebhookID: d.WebhookID, URL: d.URL, EventID: d.EventID, Status: string(d.Status),
		Attempts: d.Attempts, MaxAttempts: d.MaxAttempts, LastError: d.LastError, LastStatusCode: d.LastStatusCode,
		CreatedAt: d.CreatedAt.Format(time.RFC3339Nano), AttemptLog: make([]attemptOut, len(d.Log))}
	for i, a := range d.Log {
		out.AttemptLog[i] = attemptOut{Attempt: a.Attempt, StartedAt: a.StartedAt.Format(time.RFC3339Nano),
			DurationMS: a.Duration.Milliseconds(), StatusCode: a.StatusCode, Error: a.Error, ResponseExcerpt: a.ResponseExcerpt}
	}
	if d.LastAttemptAt != nil {
		out.LastAttemptAt = d.LastAttemptAt.Format(time.RFC3339Nano)
	}
	if d.Status == core.DeliveryPending {
		out.NextAttemptAt = d.NextAttemptAt.Format(time.RFC3339Nano)
	}
	if d.DeliveredAt != nil {
		out.DeliveredAt = d.DeliveredAt.Format(time.RFC3339Nano)
	}
	return out
}
