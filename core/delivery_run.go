package core

import (
	"context"
	"fmt"
	"time"
)

// DeliveryJob is a claimed delivery, opened and ready to send.
type DeliveryJob struct {
	Delivery
	EventCreatedAt time.Time
	lease          string // the claim's token, which fences the settlement
	attempt        WebhookAttempt
	// openErr is set when the secret or body did not open (content key changed): the
	// attempt then fails without sending.
	openErr error
}

// DeliveryOutcome says what an attempt did to its delivery.
type DeliveryOutcome int

const (
	// DeliveryAcknowledged: the receiver took the event; the delivery is delivered.
	DeliveryAcknowledged DeliveryOutcome = iota
	// DeliveryRetrying: the attempt failed; another is scheduled.
	DeliveryRetrying
	// DeliveryGivenUp: the last allowed attempt failed; the delivery is failed.
	DeliveryGivenUp
	// DeliveryDropped: the lease was lost (the endpoint was deleted, or another worker
	// took over); nothing was recorded and nothing is retried by this worker.
	DeliveryDropped
	// DeliveryReleased: the hub is stopping; the attempt does not count and the
	// delivery is due again at once.
	DeliveryReleased
)

// DeliveryReport describes one attempt, for logs and metrics.
type DeliveryReport struct {
	Outcome DeliveryOutcome
	Attempt int
	Result  WebhookAttemptResult
	// SinceEvent is the time from the turn finishing to this attempt's end.
	SinceEvent time.Duration
}

// ClaimDeliveries leases up to limit due deliveries for leaseFor and opens what they
// need. The lease outlives the attempt's 10-second limit by a wide margin. Due times
// are the hub's clock (retry backoff); lease expiry is the database's.
func (s *Deliveries) ClaimDeliveries(ctx context.Context, leaseFor time.Duration, limit int) ([]*DeliveryJob, error) {
	claimed, err := s.store.ClaimDueDeliveries(ctx, s.newLeaseToken(), s.clock.Now(), leaseFor, limit)
	if err != nil {
		return nil, fmt.Errorf("claim deliveries: %w", err)
	}
	jobs := make([]*DeliveryJob, len(claimed))
	for i, c := range claimed {
		j := &DeliveryJob{Delivery: c.Delivery, EventCreatedAt: c.EventCreatedAt, lease: c.Lease}
		secret, err := s.open(c.SealedSecret, SealedWebhookSecret.binding(c.AccountID, c.WebhookID))
		var body string
		if err == nil {
			body, err = s.open(c.SealedBody, SealedEventBody.binding(c.AccountID, c.EventID))
		}
		j.openErr = err
		j.attempt = WebhookAttempt{URL: c.URL, Secret: secret, EventID: c.EventID, Attempt: c.Attempts + 1, Body: []byte(body)}
		jobs[i] = j
	}
	return jobs, nil
}

// AttemptDelivery sends a claimed delivery once, outside any transaction, and settles
// it while the lease still holds: delivered on a 2xx, otherwise retried after
// RetryDelay(attempt), or given up after the last allowed attempt.
func (s *Deliveries) AttemptDelivery(ctx context.Context, j *DeliveryJob) (DeliveryReport, error) {
	rep := DeliveryReport{Attempt: j.attempt.Attempt}
	started := s.clock.Now()
	if j.openErr != nil {
		s.log().Warn("webhook delivery: event or secret does not open", "delivery", j.ID, "err", j.openErr)
		rep.Result = WebhookAttemptResult{Error: "the hub could not open the event or the endpoint's secret (content key changed?)"}
	} else {
		rep.Result = s.sender.Send(ctx, j.attempt)
	}
	// The settlement must survive the cancellation that may have cut the attempt short.
	settleCtx := context.WithoutCancel(ctx)
	if ctx.Err() != nil && !rep.Result.Acknowledged() {
		rep.Outcome = DeliveryReleased
		return rep, s.store.ReleaseDelivery(settleCtx, j.ID, j.lease)
	}
	now := s.clock.Now()
	rep.SinceEvent = now.Sub(j.EventCreatedAt)
	st := DeliverySettlement{
		Attempts: rep.Attempt, LastStatusCode: rep.Result.StatusCode, LastError: rep.Result.Error, LastAttemptAt: now,
		NextAttemptAt: now,
	}
	switch {
	case rep.Result.Acknowledged():
		st.Status, st.DeliveredAt, rep.Outcome = DeliveryDelivered, &now, DeliveryAcknowledged
	case rep.Attempt >= j.MaxAttempts:
		st.Status, rep.Outcome = DeliveryFailed, DeliveryGivenUp
	default:
		st.Status, st.NextAttemptAt, rep.Outcome = DeliveryPending, now.Add(RetryDelay(rep.Attempt)), DeliveryRetrying
	}
	rec := &DeliveryAttempt{DeliveryID: j.ID, Attempt: rep.Attempt, StartedAt: started, Duration: max(rep.Result.Duration, 0),
		StatusCode: rep.Result.StatusCode, Error: boundedText([]byte(rep.Result.Error), MaxAttemptErrorBytes),
		ResponseExcerpt: boundedText(rep.Result.Excerpt, MaxAttemptExcerptBytes)}
	// The log's row is written with the settlement, so the log and the summary agree:
	// an attempt whose lease was lost (its endpoint deleted, another worker took over)
	// leaves neither.
	ok, logErr, err := s.settle(settleCtx, j, st, rec)
	if logErr != nil {
		// The settlement matters more than its log line: an attempt the receiver
		// acknowledged and that stayed unsettled would be sent again when its lease ran
		// out, and again after that, for as long as the line could not be written.
		s.log().Warn("webhook delivery: the attempt's log line could not be written; settling without it",
			"delivery", j.ID, "attempt", rec.Attempt, "err", logErr)
		ok, _, err = s.settle(settleCtx, j, st, nil)
	}
	if err != nil {
		return rep, fmt.Errorf("settle delivery %s: %w", j.ID, err)
	}
	if !ok {
		rep.Outcome = DeliveryDropped
	}
	return rep, nil
}

// settle settles a delivery under its lease and writes its attempt's log line (rec;
// nil: none) in one transaction. ok is false when the lease was lost; logErr is the
// line's failure, which rolled the settlement back with it.
func (s *Deliveries) settle(ctx context.Context, j *DeliveryJob, st DeliverySettlement, rec *DeliveryAttempt) (ok bool, logErr, err error) {
	err = s.store.InTx(ctx, func(q Queries) error {
		var err error
		if ok, err = q.SettleDelivery(ctx, j.ID, j.lease, st); err != nil || !ok || rec == nil {
			return err
		}
		logErr = q.InsertDeliveryAttempt(ctx, rec)
		return logErr
	})
	if logErr != nil {
		return false, logErr, nil
	}
	return ok, nil, err
}

// ListDeliveries is the operator's view of an account's deliveries, newest first, each
// with its newest attempts (as the delivery log shows them).
func (s *Admin) ListDeliveries(ctx context.Context, accountID, status string, limit int) ([]*Delivery, error) {
	switch DeliveryStatus(status) {
	case "", DeliveryPending, DeliveryDelivered, DeliveryFailed:
	default:
		return nil, fmt.Errorf("status must be pending, delivered or failed, not %q", status)
	}
	if _, err := s.store.GetAccount(ctx, accountID); err != nil {
		return nil, notFound(err, CodeNotFound, "no account "+accountID)
	}
	ds, err := s.store.ListDeliveries(ctx, accountID, status, limit)
	if err != nil {
		return nil, err
	}
	if err := attachLogs(ctx, s.store, ds...); err != nil {
		return nil, err
	}
	return ds, nil
}

// Redeliver makes a delivery due now for one more attempt, whatever its status (a
// receiver that lost an event, or an endpoint fixed after the delivery gave up).
func (s *Admin) Redeliver(ctx context.Context, id string) (*Delivery, error) {
	var d *Delivery
	err := s.store.InTx(ctx, func(q Queries) (err error) {
		if d, err = redeliverIn(ctx, q, id, DeliveryScope{}, s.clock.Now()); err != nil {
			return err
		}
		return attachLogs(ctx, q, d)
	})
	return d, err
}

// redeliverIn is Redeliver's one state change, shared by the operator's command and the
// API's: the delivery, if within scope, is due at now with room for one more attempt,
// and the delivery worker is woken at commit. Out of scope reads as not found, so an
// account cannot learn that another's delivery id exists.
func redeliverIn(ctx context.Context, q Queries, id string, scope DeliveryScope, now time.Time) (*Delivery, error) {
	d, err := q.RedeliverDelivery(ctx, id, scope, now)
	if err != nil {
		return nil, notFound(err, CodeNotFound, "no delivery "+id)
	}
	return d, wake(ctx, q, DeliveryChannel, d.EventID)
}
