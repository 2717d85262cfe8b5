package core

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// The delivery log: an endpoint's deliveries with each attempt's record, for the
// account's scripts (GET /v1/api/webhooks/{id}/deliveries, an extension) and the app.

// Delivery log pages (an extension; api.md pages nothing like it).
const (
	DefaultDeliveriesPage = 50
	MaxDeliveriesPage     = 200
	// LogAttemptsShown is how many of a delivery's attempts a read of the log returns:
	// its newest. It is the attempts a delivery has before it gives up, so one never
	// redelivered is shown whole, while one redelivered again and again cannot make a
	// page unbounded; Delivery.Attempts still counts them all.
	LogAttemptsShown = MaxDeliveryAttempts
)

// DeliveryCursor is a position in an endpoint's log, newest first: the page after it
// holds the deliveries created before it (ties broken by id).
type DeliveryCursor struct {
	CreatedAt time.Time
	ID        string
}

// String is the cursor as the wire carries it. Its form is not part of the API:
// clients pass back what they were given.
func (c DeliveryCursor) String() string {
	return strconv.FormatInt(c.CreatedAt.UnixMilli(), 10) + "." + c.ID
}

// DeliveryQuery asks for one page of an endpoint's log.
type DeliveryQuery struct {
	Before *DeliveryCursor // nil: the newest deliveries
	Limit  int
}

// DeliveryLog is one page of an endpoint's log, newest first.
type DeliveryLog struct {
	Deliveries []*Delivery
	// Next is the cursor of the next (older) page, nil when this page is the last.
	Next *DeliveryCursor
}

// ParseDeliveryQuery reads the log's query parameters: before, a cursor a previous
// page gave, and limit, 1 to 200 (default 50; larger values are capped, as for
// messages).
func ParseDeliveryQuery(before, limit string) (DeliveryQuery, error) {
	q := DeliveryQuery{Limit: DefaultDeliveriesPage}
	if s := strings.TrimSpace(limit); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil && !isOverflow(err) || v < 1 {
			return q, Errorf(CodeInvalidRequest, "limit must be an integer from 1 to 200")
		}
		q.Limit = int(min(v, MaxDeliveriesPage))
	}
	if s := strings.TrimSpace(before); s != "" {
		ms, id, ok := strings.Cut(s, ".")
		v, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil || v < 0 || v > MaxSafeInteger || id == "" || len(id) > 100 {
			return q, Errorf(CodeInvalidRequest, "before must be the nextBefore of a previous page")
		}
		q.Before = &DeliveryCursor{CreatedAt: time.UnixMilli(v), ID: id}
	}
	return q, nil
}

// ListDeliveries returns a page of the endpoint's deliveries, newest first, each with
// its event, status, next attempt time and attempts. 404 webhook_not_found when the
// endpoint is not the account's.
func (s *Webhooks) ListDeliveries(ctx context.Context, acct *Account, webhookID string, query DeliveryQuery) (*DeliveryLog, error) {
	if _, err := s.store.GetWebhook(ctx, acct.ID, webhookID); err != nil {
		return nil, notFound(err, CodeWebhookNotFound, "no webhook with this id on this account")
	}
	limit := min(max(query.Limit, 1), MaxDeliveriesPage)
	ds, err := s.store.ListWebhookDeliveries(ctx, webhookID, query.Before, limit)
	if err != nil {
		return nil, err
	}
	if err := attachLogs(ctx, s.store, ds...); err != nil {
		return nil, err
	}
	page := &DeliveryLog{Deliveries: ds}
	// A full page may have older ones after it; a short one is the end of the log.
	if len(ds) == limit {
		last := ds[len(ds)-1]
		page.Next = &DeliveryCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return page, nil
}

// Redeliver makes one of the endpoint's deliveries due now for one more attempt, as the
// operator's Admin.Redeliver does. 404 webhook_not_found when the endpoint is not the
// account's, not_found when the delivery is not the endpoint's.
func (s *Webhooks) Redeliver(ctx context.Context, acct *Account, webhookID, deliveryID string) (*Delivery, error) {
	var d *Delivery
	err := s.store.InTx(ctx, func(q Queries) (err error) {
		if _, err := q.GetWebhook(ctx, acct.ID, webhookID); err != nil {
			return notFound(err, CodeWebhookNotFound, "no webhook with this id on this account")
		}
		if d, err = redeliverIn(ctx, q, deliveryID, DeliveryScope{AccountID: acct.ID, WebhookID: webhookID}, s.clock.Now()); err != nil {
			return err
		}
		return attachLogs(ctx, q, d)
	})
	return d, err
}

// attachLogs reads the deliveries' newest attempts (LogAttemptsShown each) in one
// statement and hands them out: the API's and the app's log, and the operator's view.
func attachLogs(ctx context.Context, q DeliveryQueries, ds ...*Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	byID := make(map[string]*Delivery, len(ds))
	for _, d := range ds {
		byID[d.ID] = d
		d.Log = []*DeliveryAttempt{}
	}
	// The attempts are read after the deliveries, so an attempt settled in between
	// could be among them. Its delivery's row was read before that settlement (the
	// attempt's record and the count commit together), so the statement takes only the
	// attempts each row counts: each delivery is shown as of one moment, and its newest
	// attempts are those before that moment.
	attempts, err := q.ListDeliveryAttempts(ctx, ds, LogAttemptsShown)
	if err != nil {
		return err
	}
	for _, a := range attempts {
		if d := byID[a.DeliveryID]; d != nil {
			d.Log = append(d.Log, a)
		}
	}
	return nil
}
