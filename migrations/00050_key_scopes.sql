-- +goose Up
-- What an API key is limited to. NULL is no limit, so every key made before keeps full
-- access: scopes (the calls it may make), project_ids (the projects whose workspaces it
-- sees), expires_at (after which it is refused as an unknown key). AccountByKeyHash
-- reads them with the key, through api_keys_hash as before.
ALTER TABLE api_keys ADD COLUMN scopes text[];
ALTER TABLE api_keys ADD COLUMN project_ids text[];
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN expires_at;
ALTER TABLE api_keys DROP COLUMN project_ids;
ALTER TABLE api_keys DROP COLUMN scopes;
