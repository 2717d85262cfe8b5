-- +goose NO TRANSACTION
-- +goose Up
-- Replicas that share the database but no disk: a local workspace's checkout is on one
-- host's data directory, so only the hubs of that host (WSHUB_HOST_ID) may step it.
-- workspaces.host names it; NULL is a workspace no host holds yet (a remote provider's,
-- which any replica serves, or a local one from before this migration or not yet
-- claimed: the first claim records the claiming hub's host, in the claim's statement).
-- Existing rows are not backfilled: which host holds an old checkout is known to no
-- one, while the claim that next steps it is, on a one-host hub, that host.
ALTER TABLE workspaces ADD COLUMN IF NOT EXISTS host text;

-- Every hub records its host alive here (HostSeen, by the database's clock): a host not
-- seen for WSHUB_HOST_LOST_AFTER is lost, and its local workspaces fail machine_lost
-- (or, when nothing of them is on its disk yet, go to another host).
CREATE TABLE IF NOT EXISTS hosts (
    id         text PRIMARY KEY,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL
);

-- The lost-host sweep (LockLostHostWorkspace, ReleaseLostHostWorkspaces): a lost host's
-- workspaces in the states it acts on, from the host's name. Paused, archived, failed
-- and deleted ones, most of them, stay out. The claim needs no new index: it filters
-- the few rows workspaces_transitional and messages_open give it. Built CONCURRENTLY
-- like 00009: workspaces is written on every state change. If the build fails,
-- PostgreSQL leaves an INVALID index of that name: drop it and migrate again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS workspaces_host ON workspaces (host)
    WHERE host IS NOT NULL
      AND state IN ('queued', 'provisioning', 'setup', 'resuming', 'ready', 'pausing', 'archiving', 'deleting');

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS workspaces_host;
DROP TABLE IF EXISTS hosts;
ALTER TABLE workspaces DROP COLUMN IF EXISTS host;
