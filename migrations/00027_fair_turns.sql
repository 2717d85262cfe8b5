-- +goose Up
-- The operator's quota of turns one account may have running at once (NULL: the
-- hub's default, a setting), and the index the fair claim counts each account's
-- held workspaces through: a lease is held from claim to release, so the rows with a
-- token are the few a worker has in hand.
ALTER TABLE accounts ADD COLUMN max_running_turns integer CHECK (max_running_turns >= 0);
CREATE INDEX workspaces_leased ON workspaces (account_id) WHERE lease_token IS NOT NULL;

-- +goose Down
DROP INDEX workspaces_leased;
ALTER TABLE accounts DROP COLUMN max_running_turns;
