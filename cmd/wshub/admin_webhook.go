package main

// wshub admin webhook deliveries|redeliver: the operator's view of webhook deliveries.

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/wshub/wshub/core"
)

func webhookDeliveries(fs *flag.FlagSet) adminRun {
	id := fs.String("account", "", "account id")
	status := fs.String("status", "", "only deliveries in this status: pending, delivered or failed")
	limit := fs.Int("limit", 100, "at most this many, newest first")
	return func(ctx context.Context, h adminHub) (any, error) {
		if *limit < 1 || *limit > 10000 {
			return nil, fmt.Errorf("--limit must be between 1 and 10000")
		}
		list, err := h.svc.ListDeliveries(ctx, *id, *status, *limit)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, len(list))
		for i, d := range list {
			out[i] = deliveryJSON(d)
		}
		return out, nil
	}
}

func webhookRedeliver(fs *flag.FlagSet) adminRun {
	id := fs.String("delivery", "", "delivery id")
	return func(ctx context.Context, h adminHub) (any, error) {
		d, err := h.svc.Redeliver(ctx, *id)
		if err != nil {
			return nil, err
		}
		return deliveryJSON(d), nil
	}
}

// deliveryJSON is a delivery for the operator: attempts, the last status code and
// error, and when the next attempt is due (pending only).
func deliveryJSON(d *core.Delivery) map[string]any {
	out := map[string]any{
		"deliveryId": d.ID, "webhookId": d.WebhookID, "url": d.URL, "eventId": d.EventID, "status": d.Status,
		"attempts": d.Attempts, "maxAttempts": d.MaxAttempts, "lastError": d.LastError,
		"createdAt": d.CreatedAt.Format(time.RFC3339Nano),
	}
	if d.LastStatusCode != 0 {
		out["lastStatusCode"] = d.LastStatusCode
	}
	if d.LastAttemptAt != nil {
		out["lastAttemptAt"] = d.LastAttemptAt.Format(time.RFC3339Nano)
	}
	if d.Status == core.DeliveryPending {
		out["nextAttemptAt"] = d.NextAttemptAt.Format(time.RFC3339Nano)
	}
	if d.DeliveredAt != nil {
		out["deliveredAt"] = d.DeliveredAt.Format(time.RFC3339Nano)
	}
	return out
}
