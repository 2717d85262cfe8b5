-- +goose NO TRANSACTION
-- +goose Up
-- NewestWorkspace (agent and model defaults on every create without them): one row by
-- a backward scan. Deleted workspaces count there, so the live-only
-- workspaces_account_live cannot serve it, and without this index every such create
-- read the account's whole workspace table. Built CONCURRENTLY like 00006: workspaces
-- is written on every state change.
--
-- ClaimWorkspaces needs no new index: it is driven from workspaces_transitional (00002)
-- and messages_open (00001), which it used to bypass by scanning every live workspace.
CREATE INDEX CONCURRENTLY workspaces_account_newest ON workspaces (account_id, created_at DESC, id DESC);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS workspaces_account_newest;
