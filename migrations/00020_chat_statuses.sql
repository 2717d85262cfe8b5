-- +goose Up
-- Turn status messages in chat threads (issue 16): one per turn and thread, posted
-- once the turn has run a moment and edited in place as its events arrive, at most
-- once per interval per thread. version counts the changes (events written, the turn
-- finished); shown is the version the message shows. message_ref is the platform's id
-- of the message once posted (Slack ts, Discord message id).
CREATE TABLE chat_statuses (
    chat_thread      bigint NOT NULL REFERENCES chat_threads (id) ON DELETE CASCADE,
    turn_id          text NOT NULL,
    workspace_id     text NOT NULL,
    message_ref      text NOT NULL DEFAULT '',
    version          integer NOT NULL DEFAULT 1,
    shown            integer NOT NULL DEFAULT 0,
    finished         boolean NOT NULL DEFAULT false,
    status           text NOT NULL DEFAULT 'open',
    started_at       timestamptz NOT NULL,
    next_at          timestamptz NOT NULL,
    refresh_at       timestamptz NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    last_error       text NOT NULL DEFAULT '',
    lease_token      text,
    lease_expires_at timestamptz,
    PRIMARY KEY (chat_thread, turn_id)
);
-- The claim: open rows due for an edit.
CREATE INDEX chat_statuses_due ON chat_statuses (next_at) WHERE status = 'open';
-- A turn's change bumps its rows.
CREATE INDEX chat_statuses_turn ON chat_statuses (workspace_id, turn_id) WHERE status = 'open';
-- Retention: rows whose message is done, oldest first.
CREATE INDEX chat_statuses_settled ON chat_statuses (started_at) WHERE status <> 'open';

-- Approval notices: a thread asked for a decision (Allow / Deny buttons).
ALTER TABLE chat_notices DROP CONSTRAINT chat_notices_kind_check;
ALTER TABLE chat_notices ADD CONSTRAINT chat_notices_kind_check CHECK (kind IN ('text', 'workspace_failed', 'approval'));

-- +goose Down
ALTER TABLE chat_notices DROP CONSTRAINT chat_notices_kind_check;
ALTER TABLE chat_notices ADD CONSTRAINT chat_notices_kind_check CHECK (kind IN ('text', 'workspace_failed'));
DROP TABLE chat_statuses;
