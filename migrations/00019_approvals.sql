-- +goose Up
-- Approvals (issue 16): what an agent asked to be allowed to do in a turn, and the
-- decision. What it asked (tool, summary) is in its approval_requested turn event,
-- sealed there; this row holds only the decision, so nothing here needs sealing.
-- request_key is the agent's own id for the request: asked again in the same turn,
-- it is the same approval.
CREATE TABLE approvals (
    id           text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces (id),
    turn_id      text NOT NULL,
    request_key  text NOT NULL,
    status       text NOT NULL,
    decided_by   text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    decided_at   timestamptz,
    UNIQUE (workspace_id, turn_id, request_key)
);
-- CloseApprovals: a turn's pending approvals end with it.
CREATE INDEX approvals_pending ON approvals (workspace_id, turn_id) WHERE status = 'pending';

-- +goose Down
DROP TABLE approvals;
