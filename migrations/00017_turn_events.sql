-- +goose Up
-- Turn events (issue 16): what an agent reports while a turn runs (tool steps, text),
-- and each turn's end. id orders a workspace's events: one writer per workspace at a
-- time (its turn), so ids of one workspace commit in order and are its stream's
-- positions (the SSE event id, afterSeq). The body is sealed like message text.
CREATE TABLE turn_events (
    id           bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces (id),
    turn_id      text NOT NULL,
    type         text NOT NULL,
    body_sealed  bytea NOT NULL,
    created_at   timestamptz NOT NULL
);
-- ListTurnEvents: a workspace's events after a position.
CREATE INDEX turn_events_workspace ON turn_events (workspace_id, id);
-- CountTurnEvents: a remote runtime's batch sent again is deduplicated by position.
CREATE INDEX turn_events_turn ON turn_events (workspace_id, turn_id);

-- +goose Down
DROP TABLE turn_events;
