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

-- +goose Down
DROP TABLE forge_review_threads;
DELETE FROM member_identities WHERE kind IN ('github', 'gitlab', 'gitea');
ALTER TABLE member_identities DROP CONSTRAINT member_identities_kind_check;
ALTER TABLE member_identities ADD CONSTRAINT member_identities_kind_check
    CHECK (kind IN ('email', 'oidc', 'slack', 'discord'));
ALTER TABLE workspaces DROP COLUMN started_by_url;
ALTER TABLE messages DROP COLUMN author_url;
