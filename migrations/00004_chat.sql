-- +goose Up
-- Chat front-ends (Slack now, Discord later): bindings of a team to an account, the
-- threads that drive workspaces, an inbox of received events, and the reply outbox.

-- chat_bindings: a Slack team (or Discord guild) acts for one account.
CREATE TABLE chat_bindings (
    platform   text NOT NULL,
    team_id    text NOT NULL,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id text REFERENCES projects(id) ON DELETE SET NULL,
    agent      text NOT NULL DEFAULT '',
    model      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (platform, team_id)
);

-- chat_channels: a channel's default project (`@bot use <project>`).
CREATE TABLE chat_channels (
    platform   text NOT NULL,
    team_id    text NOT NULL,
    channel_id text NOT NULL,
    project_id text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (platform, team_id, channel_id)
);

-- chat_threads: the thread a workspace was started from; replies go back to it.
CREATE TABLE chat_threads (
    id           bigserial PRIMARY KEY,
    platform     text NOT NULL,
    team_id      text NOT NULL,
    channel_id   text NOT NULL,
    thread_id    text NOT NULL,
    workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    follow_all   boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    UNIQUE (platform, team_id, channel_id, thread_id)
);
-- Turn recording: the threads of a workspace.
CREATE INDEX chat_threads_workspace ON chat_threads (workspace_id);

-- chat_inbox: events received from the platform, acknowledged at once and handled by
-- a worker. The primary key deduplicates platform retries; the payload is sealed
-- (it carries message text).
CREATE TABLE chat_inbox (
    platform         text NOT NULL,
    event_id         text NOT NULL,
    -- thread_key orders one thread's events: they are handled one at a time, in order.
    thread_key       text NOT NULL,
    payload_sealed   bytea NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    lease_token      text,
    lease_expires_at timestamptz,
    last_error       text NOT NULL DEFAULT '',
    received_at      timestamptz NOT NULL,
    PRIMARY KEY (platform, event_id)
);
-- ClaimChatEvents: due events, and the older pending events of a thread.
CREATE INDEX chat_inbox_due ON chat_inbox (next_attempt_at) WHERE status = 'pending';
CREATE INDEX chat_inbox_thread ON chat_inbox (thread_key, received_at) WHERE status = 'pending';
-- Pruning handled events.
CREATE INDEX chat_inbox_received ON chat_inbox (received_at) WHERE status <> 'pending';

-- chat_deliveries: one per (thread, assistant message), written with the turn.
CREATE TABLE chat_deliveries (
    thread_id        bigint NOT NULL REFERENCES chat_threads(id) ON DELETE CASCADE,
    message_id       text NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    seq              bigint NOT NULL,
    truncated        boolean NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    parts_posted     integer NOT NULL DEFAULT 0,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    lease_token      text,
    lease_expires_at timestamptz,
    last_error       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (thread_id, message_id)
);
-- ClaimChatDeliveries: due replies, and the earlier pending replies of a thread.
CREATE INDEX chat_deliveries_due ON chat_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX chat_deliveries_thread ON chat_deliveries (thread_id, seq) WHERE status = 'pending';

-- +goose Down
DROP TABLE chat_deliveries;
DROP TABLE chat_inbox;
DROP TABLE chat_threads;
DROP TABLE chat_channels;
DROP TABLE chat_bindings;
