-- +goose Up
-- chat_notices: what the hub says in a thread that is not an agent's reply: a
-- command's answer, a refusal, a workspace that failed. Like chat_deliveries it is an
-- outbox: a notice is written in the transaction that decides it (an inbox event
-- settled as handled, a workspace moved to failed) and posted by the reply workers,
-- so a retried event never says a thing twice and a failure is never left unsaid.
CREATE TABLE chat_notices (
    id               bigserial PRIMARY KEY,
    platform         text NOT NULL,
    team_id          text NOT NULL,
    channel_id       text NOT NULL,
    thread_id        text NOT NULL,
    -- notice_key deduplicates: "<event id>:<n>" for an event's answers,
    -- "failed:<workspace id>" for a failure.
    notice_key       text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('text', 'workspace_failed')),
    -- text: the words, in the platform's markup (sealed); workspace_failed: the
    -- workspace and its statusCode, worded by the bot when posted.
    text_sealed      bytea,
    workspace_id     text NOT NULL DEFAULT '',
    code             text NOT NULL DEFAULT '',
    -- chat_thread: a failure notice waits for the thread's pending replies, so the
    -- interrupted turn's reply reads before the failure.
    chat_thread      bigint REFERENCES chat_threads(id) ON DELETE CASCADE,
    status           text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    parts_posted     integer NOT NULL DEFAULT 0,
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    lease_token      text,
    lease_expires_at timestamptz,
    last_error       text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL,
    UNIQUE (platform, notice_key)
);
-- ClaimChatNotices: due notices, and the earlier pending notices of a thread.
CREATE INDEX chat_notices_due ON chat_notices (next_attempt_at) WHERE status = 'pending';
CREATE INDEX chat_notices_thread ON chat_notices (platform, team_id, channel_id, thread_id, id) WHERE status = 'pending';
-- Pruning posted notices.
CREATE INDEX chat_notices_created ON chat_notices (created_at) WHERE status <> 'pending';

-- +goose Down
DROP TABLE chat_notices;
