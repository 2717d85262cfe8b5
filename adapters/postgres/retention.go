package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

var _ core.RetentionQueries = queries{}

// pruneBatch deletes at most limit ($2) rows of table whose age column is before the
// cutoff ($1) and that match where. The inner SELECT walks an index on the age column
// (each caller names it; ORDER BY keeps the planner on it even with a large backlog, and
// prunes oldest first) and locks what it picks FOR UPDATE SKIP LOCKED: a row a worker or
// an operator holds is left for the next sweep, and the statement never waits. The rows
// are then addressed by ctid, which cannot change while this statement holds their locks
// (a TID scan, no second index lookup).
func (q queries) pruneBatch(ctx context.Context, table, age, where string, before time.Time, limit int) (int64, error) {
	return q.exec(ctx, `DELETE FROM `+table+` WHERE ctid = ANY(ARRAY(
		SELECT ctid FROM `+table+` WHERE `+age+` < $1 AND `+where+`
		ORDER BY `+age+` LIMIT $2 FOR UPDATE SKIP LOCKED))`, before, limit)
}

// PruneReceipts: index idempotency_receipts_created.
func (q queries) PruneReceipts(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune receipts")
	return q.pruneBatch(ctx, "idempotency_receipts", "created_at", "true", before, limit)
}

// PruneChatInbox: index chat_inbox_received (status <> 'pending', which the planner
// proves from the IN list).
func (q queries) PruneChatInbox(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune chat inbox")
	return q.pruneBatch(ctx, "chat_inbox", "received_at", `status IN ('done', 'failed')`, before, limit)
}

// PruneChatDeliveries: index chat_deliveries_settled.
func (q queries) PruneChatDeliveries(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune chat deliveries")
	return q.pruneBatch(ctx, "chat_deliveries", "created_at", `status IN ('delivered', 'failed')`, before, limit)
}

// PruneChatNotices: index chat_notices_created.
func (q queries) PruneChatNotices(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune chat notices")
	return q.pruneBatch(ctx, "chat_notices", "created_at", `status IN ('delivered', 'failed')`, before, limit)
}

// PruneChatStatuses: index chat_statuses_settled.
func (q queries) PruneChatStatuses(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune chat statuses")
	return q.pruneBatch(ctx, "chat_statuses", "started_at", `status IN ('done', 'failed')`, before, limit)
}

// PruneWebhookDeliveries: index webhook_deliveries_settled. Age is the creation time (the
// turn's end): attempts end within a day of it, far inside the retention period.
func (q queries) PruneWebhookDeliveries(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune webhook deliveries")
	return q.pruneBatch(ctx, "webhook_deliveries", "created_at", `status IN ('delivered', 'failed')`, before, limit)
}

// PruneEvents: index events_created, and webhook_deliveries_event for the NOT EXISTS.
// Deliveries are only ever inserted with their event, so one that has none left never
// gets one again. Old events still held by a pending delivery are passed over on each
// batch; there are few (a delivery gives up within a day unless an operator redelivers).
//
// OFFSET 0 keeps the NOT EXISTS a probe of webhook_deliveries_event per old event, in
// created_at order until the batch is full. As an anti-join the planner, its statistics
// taken before the sweep pruned the deliveries, expects most old events still held and
// hashes every delivery in the table first: a batch then costs the whole table (36 ms
// at 20,000 deliveries, growing with them) instead of its own rows (1.6 ms).
func (q queries) PruneEvents(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune events")
	return q.pruneBatch(ctx, "events", "created_at",
		`NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id OFFSET 0)`, before, limit)
}

// PruneCronRuns: index cron_runs_tick.
func (q queries) PruneCronRuns(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune cron runs")
	return q.pruneBatch(ctx, "cron_runs", "tick", "true", before, limit)
}

// PruneAppSessions: index app_sessions_expires.
func (q queries) PruneAppSessions(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune app sessions")
	return q.pruneBatch(ctx, "app_sessions", "expires_at", "true", before, limit)
}

// PruneSignInLinks: index app_signin_links_expires.
func (q queries) PruneSignInLinks(ctx context.Context, before time.Time, limit int) (_ int64, err error) {
	defer wrapErr(&err, "prune sign-in links")
	return q.pruneBatch(ctx, "app_signin_links", "expires_at", "true", before, limit)
}
