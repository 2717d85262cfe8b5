-- +goose Up
-- People who use the hub: a member belongs to accounts as owner or member, and is
-- recognised at sign-in by one or more identities (an email, an OpenID Connect
-- issuer and subject, a Slack team and user, a Discord user).
CREATE TABLE members (
    id         text PRIMARY KEY,
    name       text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL
);

CREATE TABLE member_identities (
    kind      text NOT NULL CHECK (kind IN ('email', 'oidc', 'slack', 'discord')),
    subject   text NOT NULL,
    member_id text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    PRIMARY KEY (kind, subject)
);
-- A member's identities, listed with the member.
CREATE INDEX member_identities_member ON member_identities (member_id);

CREATE TABLE memberships (
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    member_id  text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'member')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, member_id)
);
-- The accounts of a member (sign-in, the account switcher).
CREATE INDEX memberships_member ON memberships (member_id);

-- +goose Down
DROP TABLE memberships;
DROP TABLE member_identities;
DROP TABLE members;
