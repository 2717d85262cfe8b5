-- +goose NO TRANSACTION
-- +goose Up
-- Retention sweep (core.SweepRetention): rows past the retention period are deleted in
-- bounded batches picked by age. Receipts (idempotency_receipts_created) and handled chat
-- events (chat_inbox_received) have their index already; these are the rest.
--
-- These tables have grown unpruned until now, so the indexes are built CONCURRENTLY
-- (outside a transaction): a plain CREATE INDEX would block turn recording and delivery
-- settling for the whole build. If a build fails, PostgreSQL leaves an INVALID index of
-- that name: drop it and migrate again.

-- PruneChatDeliveries: posted or given-up replies by age.
CREATE INDEX CONCURRENTLY chat_deliveries_settled ON chat_deliveries (created_at) WHERE status <> 'pending';
-- PruneWebhookDeliveries: delivered or given-up deliveries by age.
CREATE INDEX CONCURRENTLY webhook_deliveries_settled ON webhook_deliveries (created_at) WHERE status <> 'pending';
-- PruneEvents: events by age (their remaining deliveries are found through
-- webhook_deliveries_event).
CREATE INDEX CONCURRENTLY events_created ON events (created_at);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS events_created;
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_settled;
DROP INDEX CONCURRENTLY IF EXISTS chat_deliveries_settled;
