package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// WebhookIDs uses webhooks_account.
func (q queries) WebhookIDs(ctx context.Context, accountID string) (_ []string, err error) {
	defer wrapErr(&err, "webhook ids")
	var ids []string
	err = q.selectAll(ctx, &ids, `SELECT id FROM webhooks WHERE account_id = $1 ORDER BY position`, accountID)
	return ids, err
}

func (q queries) InsertEvent(ctx context.Context, e *core.Event) (err error) {
	defer wrapErr(&err, "insert event")
	_, err = q.exec(ctx, `INSERT INTO events (id, account_id, workspace_id, turn_id, type, body_sealed, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, e.ID, e.AccountID, e.WorkspaceID, e.TurnID, e.Type, e.SealedBody, e.CreatedAt)
	return err
}

// InsertDeliveries writes all of an event's deliveries in one statement (at most one
// per endpoint, so at most 20 rows).
func (q queries) InsertDeliveries(ctx context.Context, ds []*core.Delivery) (err error) {
	defer wrapErr(&err, "insert deliveries")
	if len(ds) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(`INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, status, max_attempts,
		next_attempt_at, created_at) VALUES `)
	args := make([]any, 0, 8*len(ds))
	for i, d := range ds {
		if i > 0 {
			sb.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8)
		args = append(args, d.ID, d.AccountID, d.WebhookID, d.EventID, d.Status, d.MaxAttempts, d.NextAttemptAt, d.CreatedAt)
	}
	_, err = q.exec(ctx, sb.String(), args...)
	return err
}

type claimedDeliveryRow struct {
	ID             string    `db:"id"`
	LeaseToken     string    `db:"lease_token"`
	AccountID      string    `db:"account_id"`
	WebhookID      string    `db:"webhook_id"`
	EventID        string    `db:"event_id"`
	Attempts       int       `db:"attempts"`
	MaxAttempts    int       `db:"max_attempts"`
	URL            string    `db:"url"`
	SecretSealed   []byte    `db:"secret_sealed"`
	BodySealed     []byte    `db:"body_sealed"`
	EventCreatedAt time.Time `db:"event_created_at"`
}

// deliveryQueue is the webhook outbox; its claim uses webhook_deliveries_due and
// returns everything an attempt needs (endpoint URL and secret, event body).
var deliveryQueue = leasedTable{
	table: "webhook_deliveries", alias: "d", key: []string{"id"},
	due: "d.status = 'pending' AND d.next_attempt_at <= $4", order: "d.next_attempt_at",
	from: "events e, webhooks w", join: "e.id = d.event_id AND w.id = d.webhook_id",
	returning: `d.id, d.lease_token, d.account_id, d.webhook_id, d.event_id, d.attempts, d.max_attempts, w.url, w.secret_sealed,
		e.body_sealed, e.created_at AS event_created_at`,
}

// ClaimDueDeliveries claims from deliveryQueue; due is the hub's clock (now).
func (q queries) ClaimDueDeliveries(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) (_ []*core.ClaimedDelivery, err error) {
	defer wrapErr(&err, "claim due deliveries")
	var rows []claimedDeliveryRow
	if err := deliveryQueue.claim(ctx, q, &rows, token, leaseFor, limit, now); err != nil {
		return nil, err
	}
	out := make([]*core.ClaimedDelivery, len(rows))
	for i, r := range rows {
		out[i] = &core.ClaimedDelivery{
			Delivery: core.Delivery{ID: r.ID, AccountID: r.AccountID, WebhookID: r.WebhookID, EventID: r.EventID,
				Status: core.DeliveryPending, Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, URL: r.URL},
			Lease: r.LeaseToken, SealedSecret: r.SecretSealed, SealedBody: r.BodySealed, EventCreatedAt: r.EventCreatedAt,
		}
	}
	return out, nil
}

// SettleDelivery is fenced by the lease token: a row deleted with its endpoint, or
// claimed by another worker after this lease expired, is left alone.
func (q queries) SettleDelivery(ctx context.Context, id, token string, st core.DeliverySettlement) (_ bool, err error) {
	defer wrapErr(&err, "settle delivery")
	return deliveryQueue.settle(ctx, q, []any{id}, token,
		set{col: "status", val: st.Status}, set{col: "attempts", val: st.Attempts},
		set{col: "last_status_code", val: nullInt(st.LastStatusCode)}, set{col: "last_error", val: st.LastError},
		set{col: "last_attempt_at", val: st.LastAttemptAt}, set{col: "next_attempt_at", val: st.NextAttemptAt},
		set{col: "delivered_at", val: nullTime(st.DeliveredAt), keep: true})
}

func (q queries) ReleaseDelivery(ctx context.Context, id, token string) (err error) {
	defer wrapErr(&err, "release delivery")
	return deliveryQueue.release(ctx, q, []any{id}, token)
}

type deliveryRow struct {
	ID             string        `db:"id"`
	AccountID      string        `db:"account_id"`
	WebhookID      string        `db:"webhook_id"`
	EventID        string        `db:"event_id"`
	Status         string        `db:"status"`
	Attempts       int           `db:"attempts"`
	MaxAttempts    int           `db:"max_attempts"`
	NextAttemptAt  time.Time     `db:"next_attempt_at"`
	LastStatusCode sql.NullInt64 `db:"last_status_code"`
	LastError      string        `db:"last_error"`
	LastAttemptAt  sql.NullTime  `db:"last_attempt_at"`
	DeliveredAt    sql.NullTime  `db:"delivered_at"`
	CreatedAt      time.Time     `db:"created_at"`
	URL            string        `db:"url"`
	EventType      string        `db:"event_type"`
	WorkspaceID    string        `db:"workspace_id"`
}

func (r deliveryRow) core() *core.Delivery {
	return &core.Delivery{
		ID: r.ID, AccountID: r.AccountID, WebhookID: r.WebhookID, EventID: r.EventID, Status: core.DeliveryStatus(r.Status),
		Attempts: r.Attempts, MaxAttempts: r.MaxAttempts, NextAttemptAt: r.NextAttemptAt,
		LastStatusCode: int(r.LastStatusCode.Int64), LastError: r.LastError, LastAttemptAt: timePtr(r.LastAttemptAt),
		DeliveredAt: timePtr(r.DeliveredAt), CreatedAt: r.CreatedAt, URL: r.URL, EventType: r.EventType,
		WorkspaceID: r.WorkspaceID,
	}
}

// deliveryColumns are read from webhook_deliveries d joined with webhooks w and events e.
const deliveryColumns = `d.id, d.account_id, d.webhook_id, d.event_id, d.status, d.attempts, d.max_attempts,
	d.next_attempt_at, d.last_status_code, d.last_error, d.last_attempt_at, d.delivered_at, d.created_at, w.url,
	e.type AS event_type, e.workspace_id`

func deliveries(rows []deliveryRow) []*core.Delivery {
	out := make([]*core.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.core()
	}
	return out
}

// ListDeliveries uses webhook_deliveries_account.
func (q queries) ListDeliveries(ctx context.Context, accountID, status string, limit int) (_ []*core.Delivery, err error) {
	defer wrapErr(&err, "list deliveries")
	var rows []deliveryRow
	if err := q.selectAll(ctx, &rows, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
		WHERE d.account_id = $1 AND ($2 = '' OR d.status = $2) ORDER BY d.created_at DESC, d.id LIMIT $3`,
		accountID, status, limit); err != nil {
		return nil, err
	}
	return deliveries(rows), nil
}

// listWebhookDeliveriesSQL uses webhook_deliveries_webhook: the row comparison with the
// cursor ($2, $3; NULL for the first page) is a range of that index, so a page costs
// its own rows however long the log is.
const listWebhookDeliveriesSQL = `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d
	JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id
	WHERE d.webhook_id = $1 AND ($2::timestamptz IS NULL OR (d.created_at, d.id) < ($2::timestamptz, $3::text))
	ORDER BY d.created_at DESC, d.id DESC LIMIT $4`

// ListWebhookDeliveries reads one page of an endpoint's log.
func (q queries) ListWebhookDeliveries(ctx context.Context, webhookID string, before *core.DeliveryCursor, limit int) (_ []*core.Delivery, err error) {
	defer wrapErr(&err, "list webhook deliveries")
	var at sql.NullTime
	var id string
	if before != nil {
		at, id = sql.NullTime{Time: before.CreatedAt, Valid: true}, before.ID
	}
	var rows []deliveryRow
	if err := q.selectAll(ctx, &rows, listWebhookDeliveriesSQL, webhookID, at, id, limit); err != nil {
		return nil, err
	}
	return deliveries(rows), nil
}

type attemptRow struct {
	DeliveryID      string        `db:"delivery_id"`
	Attempt         int           `db:"attempt"`
	StartedAt       time.Time     `db:"started_at"`
	DurationMS      int64         `db:"duration_ms"`
	StatusCode      sql.NullInt64 `db:"status_code"`
	Error           string        `db:"error"`
	ResponseExcerpt string        `db:"response_excerpt"`
}

// InsertDeliveryAttempt writes one row of the log. A number recorded twice is refused
// (the key): core then settles the attempt without its line.
func (q queries) InsertDeliveryAttempt(ctx context.Context, a *core.DeliveryAttempt) (err error) {
	defer wrapErr(&err, "insert delivery attempt")
	_, err = q.exec(ctx, `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code,
		error, response_excerpt) VALUES ($1, $2, $3, $4, $5, $6, $7)`, a.DeliveryID, a.Attempt, a.StartedAt,
		a.Duration.Milliseconds(), nullInt(a.StatusCode), a.Error, a.ResponseExcerpt)
	return err
}

// listDeliveryAttemptsSQL reads each delivery's newest $3 attempts numbered up to its
// count ($1 and $2, side by side): for each, a backward range of the primary key
// (delivery_id, attempt) that stops after $3 rows, so a delivery redelivered a
// thousand times costs what one attempted twenty times does.
const listDeliveryAttemptsSQL = `SELECT a.delivery_id, a.attempt, a.started_at, a.duration_ms, a.status_code, a.error,
		a.response_excerpt
	FROM unnest($1::text[], $2::integer[]) AS d(id, attempts)
	CROSS JOIN LATERAL (SELECT * FROM webhook_delivery_attempts
		WHERE delivery_id = d.id AND attempt <= d.attempts ORDER BY attempt DESC LIMIT $3) a
	ORDER BY a.delivery_id, a.attempt`

// ListDeliveryAttempts reads the newest attempts of a page's deliveries in one statement.
func (q queries) ListDeliveryAttempts(ctx context.Context, ds []*core.Delivery, newest int) (_ []*core.DeliveryAttempt, err error) {
	defer wrapErr(&err, "list delivery attempts")
	if len(ds) == 0 {
		return nil, nil
	}
	ids, counts := make([]string, len(ds)), make([]int64, len(ds))
	for i, d := range ds {
		ids[i], counts[i] = d.ID, int64(d.Attempts)
	}
	var rows []attemptRow
	if err := q.selectAll(ctx, &rows, listDeliveryAttemptsSQL, pq.Array(ids), pq.Array(counts), newest); err != nil {
		return nil, err
	}
	out := make([]*core.DeliveryAttempt, len(rows))
	for i, r := range rows {
		out[i] = &core.DeliveryAttempt{DeliveryID: r.DeliveryID, Attempt: r.Attempt, StartedAt: r.StartedAt,
			Duration: time.Duration(r.DurationMS) * time.Millisecond, StatusCode: int(r.StatusCode.Int64), Error: r.Error,
			ResponseExcerpt: r.ResponseExcerpt}
	}
	return out, nil
}

// RedeliverDelivery allows one attempt beyond those made, due at now, when the
// delivery is within scope (empty fields: any).
func (q queries) RedeliverDelivery(ctx context.Context, id string, scope core.DeliveryScope, now time.Time) (_ *core.Delivery, err error) {
	defer wrapErr(&err, "redeliver delivery")
	var r deliveryRow
	err = q.get(ctx, &r, `WITH d AS (
		UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2,
			max_attempts = GREATEST(max_attempts, attempts + 1)
		WHERE id = $1 AND ($3 = '' OR account_id = $3) AND ($4 = '' OR webhook_id = $4) RETURNING *)
	SELECT `+deliveryColumns+` FROM d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.id = d.event_id`,
		id, now, scope.AccountID, scope.WebhookID)
	if err != nil {
		return nil, err
	}
	return r.core(), nil
}

func nullInt(n int) sql.NullInt64 { return sql.NullInt64{Int64: int64(n), Valid: n != 0} }
