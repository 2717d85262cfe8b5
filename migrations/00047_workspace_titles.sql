-- +goose Up
-- A workspace's title: the first line of its first prompt (or of the issue or thread it
-- came from), as the app, the CLI and chat name it. Sealed bound to the account and the
-- workspace like the prompt it comes from; NULL until the workspace has a first
-- message (workspaces from before this have none, and are named by their id).
ALTER TABLE workspaces ADD COLUMN title_sealed bytea;

-- +goose Down
ALTER TABLE workspaces DROP COLUMN title_sealed;
