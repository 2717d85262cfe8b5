-- +goose Up
-- Transactional outbox for workspace.turn.completed (api.md section 6): the event and
-- one delivery per endpoint are written in the transaction that records the turn.

-- events: one row per finished turn; the body is the exact JSON every delivery sends,
-- sealed (it carries the reply text) and bound to the event id.
CREATE TABLE events (
    id           text PRIMARY KEY,
    account_id   text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    turn_id      text NOT NULL,
    type         text NOT NULL,
    body_sealed  bytea NOT NULL,
    created_at   timestamptz NOT NULL
);

-- webhook_deliveries: one row per (endpoint, event). Deleting an endpoint deletes its
-- deliveries through the foreign key, in the deleting transaction.
CREATE TABLE webhook_deliveries (
    id               text PRIMARY KEY,
    account_id       text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    webhook_id       text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event_id         text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
    status           text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    -- max_attempts is 20; an operator's redeliver raises it by one for one more attempt.
    max_attempts     integer NOT NULL,
    next_attempt_at  timestamptz NOT NULL,
    lease_token      text,
    lease_expires_at timestamptz,
    last_status_code integer,
    last_error       text NOT NULL DEFAULT '',
    last_attempt_at  timestamptz,
    delivered_at     timestamptz,
    created_at       timestamptz NOT NULL,
    UNIQUE (webhook_id, event_id)
);
-- ClaimDueDeliveries: pending rows by due time.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- ListDeliveries (operator view): an account's deliveries, newest first.
CREATE INDEX webhook_deliveries_account ON webhook_deliveries (account_id, created_at DESC, id);
-- The event foreign key: deleting a workspace's events finds their deliveries.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
-- Events of a workspace (cascade on workspace delete).
CREATE INDEX events_workspace ON events (workspace_id);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE events;
