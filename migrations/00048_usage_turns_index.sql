-- +goose NO TRANSACTION
-- +goose Up
-- The usage page (UsageByMember, UsageByProject, UsageByAgent): each of an account's
-- workspaces' turns that ended in the last 30 days, without reading the rest of their
-- conversations. Built CONCURRENTLY like 00009: messages is written on every send
-- and every turn.
CREATE INDEX CONCURRENTLY messages_turns_ended ON messages (workspace_id, created_at) WHERE role = 'assistant';

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS messages_turns_ended;
