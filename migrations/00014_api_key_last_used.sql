-- +goose Up
-- When a key last authenticated a request, within a minute (AccountByKeyHash writes it
-- at most once a minute per key): `wshub admin key list` shows it, so an operator can
-- tell a key in use from one to revoke.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- +goose Down
ALTER TABLE api_keys DROP COLUMN last_used_at;
