-- +goose Up
-- The operator's quota of live (not revoked) API keys one account may hold (NULL: the
-- hub's default, a setting): every key has its own rate limit and streams, so the
-- number of keys bounds what one account can take of a replica. api_keys_live is the
-- index the quota counts through, in the transaction that makes a key; api_keys_account
-- the one an account's key list reads in its order.
ALTER TABLE accounts ADD COLUMN max_keys integer CHECK (max_keys >= 0);
CREATE INDEX api_keys_live ON api_keys (account_id) WHERE revoked_at IS NULL;
CREATE INDEX api_keys_account ON api_keys (account_id, created_at, id);

-- +goose Down
DROP INDEX api_keys_account;
DROP INDEX api_keys_live;
ALTER TABLE accounts DROP COLUMN max_keys;
