-- +goose Up
-- The app's sign-ins: a session per browser, kept here (revocable, with idle and
-- absolute lifetimes), found by the hash of its cookie's token; and one-time sign-in
-- links (the development hub prints one).
CREATE TABLE app_sessions (
    id           text PRIMARY KEY,
    token_hash   bytea NOT NULL,
    member_id    text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    csrf         text NOT NULL,
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz
);
-- Every app request: the session by its token.
CREATE UNIQUE INDEX app_sessions_token ON app_sessions (token_hash);
-- Ending a member's sessions.
CREATE INDEX app_sessions_member ON app_sessions (member_id) WHERE ended_at IS NULL;

CREATE TABLE app_signin_links (
    token_hash bytea PRIMARY KEY,
    member_id  text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);

-- Who made a key: a member (in the app), or '' (the operator).
ALTER TABLE api_keys ADD COLUMN created_by text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE api_keys DROP COLUMN created_by;
DROP TABLE app_signin_links;
DROP TABLE app_sessions;
