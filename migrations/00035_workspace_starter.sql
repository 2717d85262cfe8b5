-- +goose Up
-- Who started each workspace (api, slack, discord, app; their id there; their name as
-- it was), and the member behind them when known: the app's list shows it, and its
-- "mine" filter reads the member, newest first.
ALTER TABLE workspaces
    ADD COLUMN started_by_kind      text NOT NULL DEFAULT '',
    ADD COLUMN started_by_id        text NOT NULL DEFAULT '',
    ADD COLUMN started_by_name      text NOT NULL DEFAULT '',
    ADD COLUMN started_by_member_id text;
CREATE INDEX workspaces_member_newest ON workspaces (started_by_member_id, created_at DESC, id DESC)
    WHERE started_by_member_id IS NOT NULL;

-- +goose Down
DROP INDEX workspaces_member_newest;
ALTER TABLE workspaces DROP COLUMN started_by_kind, DROP COLUMN started_by_id, DROP COLUMN started_by_name,
    DROP COLUMN started_by_member_id;
