-- +goose Up
-- Who changed an account's keys, webhooks and members, when, and from where: kept for
-- the account's owners to read in the app.
CREATE TABLE audit_log (
    id         bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    at         timestamptz NOT NULL,
    actor      text NOT NULL,
    actor_name text NOT NULL DEFAULT '',
    action     text NOT NULL,
    target     text NOT NULL,
    detail     text NOT NULL DEFAULT '',
    address    text NOT NULL DEFAULT ''
);
-- The log page: an account's entries, newest first, by id.
CREATE INDEX audit_log_account ON audit_log (account_id, id DESC);

-- +goose Down
DROP TABLE audit_log;
