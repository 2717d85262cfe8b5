-- +goose Up
-- The provider an account's workspaces run on when a create names none (NULL: the
-- hub's default), and the one a chat binding's workspaces start on ('': the account's).
ALTER TABLE accounts ADD COLUMN provider_id text;
ALTER TABLE chat_bindings ADD COLUMN provider_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE chat_bindings DROP COLUMN provider_id;
ALTER TABLE accounts DROP COLUMN provider_id;
