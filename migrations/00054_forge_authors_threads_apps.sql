-- +goose Up
-- A forge author's profile page (https://github.com/<login>, a GitLab's or Gitea's own),
-- kept beside the author as it was when they wrote: a login alone does not say which
-- forge's person it was.
ALTER TABLE messages ADD COLUMN author_url text;
ALTER TABLE workspaces ADD COLUMN started_by_url text;

-- A member may link a forge identity (its subject the person's profile URL), so that a
-- forge author who is that member is named as the commit's co-author.
ALTER TABLE member_identities DROP CONSTRAINT member_identities_kind_check;
ALTER TABLE member_identities ADD CONSTRAINT member_identities_kind_check
    CHECK (kind IN ('email', 'oidc', 'slack', 'discord', 'github', 'gitlab', 'gitea'));

-- The review thread a turn answers in: the line comment its message came from (GitHub's
-- first review comment of the thread, GitLab's discussion). Written before the message,
-- so by the turn's id, which the message's key determines.
CREATE TABLE forge_review_threads (
    turn_id     text PRIMARY KEY,
    project_id  text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    pull_number bigint NOT NULL,
    thread      text NOT NULL,
    created_at  timestamptz NOT NULL
);

-- An account's GitHub App: one webhook secret signs the deliveries of every repository
-- the App is installed on, each naming its installation; an installation is one
-- account's. A project of the account then takes the App's events without a secret of
-- its own.
CREATE TABLE account_github_apps (
    account_id    text PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    app_id        bigint NOT NULL,
    secret_sealed bytea NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE TABLE github_app_installations (
    installation_id bigint PRIMARY KEY,
    account_id      text NOT NULL REFERENCES account_github_apps(account_id) ON DELETE CASCADE
);
CREATE INDEX github_app_installations_account ON github_app_installations (account_id);
ALTER TABLE project_forge_events ALTER COLUMN secret_sealed DROP NOT NULL;

-- +goose Down
DELETE FROM project_forge_events WHERE secret_sealed IS NULL;
ALTER TABLE project_forge_events ALTER COLUMN secret_sealed SET NOT NULL;
DROP TABLE github_app_installations;
DROP TABLE account_github_apps;
DROP TABLE forge_review_threads;
DELETE FROM member_identities WHERE kind IN ('github', 'gitlab', 'gitea');
ALTER TABLE member_identities DROP CONSTRAINT member_identities_kind_check;
ALTER TABLE member_identities ADD CONSTRAINT member_identities_kind_check
    CHECK (kind IN ('email', 'oidc', 'slack', 'discord'));
ALTER TABLE workspaces DROP COLUMN started_by_url;
ALTER TABLE messages DROP COLUMN author_url;
