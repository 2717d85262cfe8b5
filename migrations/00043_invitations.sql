-- +goose Up
-- An owner's invitation of an email address to an account: pending until the person
-- with that address signs in and accepts (or declines) it. Until then the account sees
-- the address only: no member is made or linked without that person's consent. An
-- answered or withdrawn invitation is deleted; the audit log keeps what happened.
CREATE TABLE invitations (
    id         text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email      text NOT NULL,
    role       text NOT NULL CHECK (role IN ('owner', 'member')),
    invited_by text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    -- An account's pending invitations (the members page), one per address.
    UNIQUE (account_id, email)
);
-- A person's invitations, by their addresses (sign-in, the invitations page).
CREATE INDEX invitations_email ON invitations (email);

-- A person invited who belongs to no account yet signs in to answer: their session has
-- no account until they accept.
ALTER TABLE app_sessions ALTER COLUMN account_id DROP NOT NULL;

-- +goose Down
DELETE FROM app_sessions WHERE account_id IS NULL;
ALTER TABLE app_sessions ALTER COLUMN account_id SET NOT NULL;
DROP TABLE invitations;
