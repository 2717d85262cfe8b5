-- +goose NO TRANSACTION
-- +goose Up
-- NewestWorkspace (agent and model defaults on every create without them): one row by
-- a backward scan. Deleted workspaces count there, so the live-only
-- workspaces_account_live cannot serve it, and without this index every such create
-- read the account's whole workspace table. Built CONCURRENTLY like 00006: workspaces
-- is written on every state change.
CREATE INDEX CONCURRENTLY workspaces_account_newest ON workspaces (account_id, created_at DESC, id DESC);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS workspaces_account_newest;
