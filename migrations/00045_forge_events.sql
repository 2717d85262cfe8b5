-- +goose Up
-- A project's forge events: the secret its forge signs webhook deliveries with (sealed
-- bound to the project, as its credential is), the handle that asks for work in a
-- comment, and the repository as events name it (host/owner/name, lower case), by
-- which an event finds its candidate projects before its signature is checked.
CREATE TABLE project_forge_events (
    project_id     text PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    account_id     text NOT NULL,
    forge          text NOT NULL CHECK (forge IN ('github', 'gitlab', 'gitea')),
    repository_key text NOT NULL,
    handle         text NOT NULL,
    secret_sealed  bytea NOT NULL,
    updated_at     timestamptz NOT NULL
);
-- ForgeHooksOf: an event's repository to its projects.
CREATE INDEX project_forge_events_repository ON project_forge_events (forge, repository_key);

-- The hub's one comment in an issue it works on (a forge thread: platform, project,
-- repository, issue), edited in place as the work goes.
CREATE TABLE forge_comments (
    platform    text NOT NULL,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    thread_id   text NOT NULL,
    comment_ref text NOT NULL,
    PRIMARY KEY (platform, team_id, channel_id, thread_id)
);

-- +goose Down
DROP TABLE forge_comments;
DROP TABLE project_forge_events;
