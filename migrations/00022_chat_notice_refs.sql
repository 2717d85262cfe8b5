-- +goose Up
-- Approval messages follow their decision (issue 16): a posted approval notice keeps
-- the platform's id of its message (message_ref), and an approval_decided notice names
-- the notice whose message it edits (refers_to, a notice_key of the same platform):
-- a decision taken anywhere (API, another thread, a timeout, the turn's end) shows in
-- every thread and takes the buttons away.
ALTER TABLE chat_notices ADD COLUMN message_ref text NOT NULL DEFAULT '';
ALTER TABLE chat_notices ADD COLUMN refers_to text;
ALTER TABLE chat_notices DROP CONSTRAINT chat_notices_kind_check;
ALTER TABLE chat_notices ADD CONSTRAINT chat_notices_kind_check
    CHECK (kind IN ('text', 'workspace_failed', 'approval', 'approval_decided'));

-- +goose Down
ALTER TABLE chat_notices DROP CONSTRAINT chat_notices_kind_check;
ALTER TABLE chat_notices ADD CONSTRAINT chat_notices_kind_check CHECK (kind IN ('text', 'workspace_failed', 'approval'));
ALTER TABLE chat_notices DROP COLUMN refers_to;
ALTER TABLE chat_notices DROP COLUMN message_ref;
