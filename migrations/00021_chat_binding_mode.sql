-- +goose Up
-- A chat binding's runtime mode (issue 16): workspaces its members start run in it
-- ('' = the hub's default), so a team can have them ask before what needs approval.
ALTER TABLE chat_bindings ADD COLUMN runtime_mode text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE chat_bindings DROP COLUMN runtime_mode;
