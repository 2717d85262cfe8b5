-- +goose Up
-- An account's GitHub App may carry its private key (sealed, bound to the account):
-- the account's GitHub projects without a credential of their own then reach their
-- repositories with installation tokens the hub mints from it.
ALTER TABLE account_github_apps ADD COLUMN key_sealed bytea;

-- +goose Down
ALTER TABLE account_github_apps DROP COLUMN key_sealed;
