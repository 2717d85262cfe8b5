-- +goose Up
-- Replicas that share the database but no disk: a local workspace's checkout is on one
-- host's data directory, so only the hubs of that host (WSHUB_HOST_ID) may step it.
-- workspaces.host names it; NULL is a workspace no host holds yet (a remote provider's,
-- which any replica serves, or a local one from before this migration or not yet
-- claimed: the first claim records the claiming hub's host, in the claim's statement).
-- Existing rows are not backfilled: which host holds an old checkout is known to no
-- one, while the claim that next steps it is, on a one-host hub, that host. The claim
-- needs no new index: it filters the few rows workspaces_transitional and
-- messages_open give it.
ALTER TABLE workspaces ADD COLUMN host text;

-- +goose Down
ALTER TABLE workspaces DROP COLUMN host;
