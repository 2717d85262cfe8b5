-- +goose Up
-- An operator's quotas for one account; NULL is the hub's default (a setting).
ALTER TABLE accounts
    ADD COLUMN max_workspaces    integer CHECK (max_workspaces >= 0),
    ADD COLUMN max_open_messages integer CHECK (max_open_messages >= 0);

-- +goose Down
ALTER TABLE accounts DROP COLUMN max_workspaces, DROP COLUMN max_open_messages;
