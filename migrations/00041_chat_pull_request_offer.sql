-- +goose Up
-- A thread whose workspace's branch was first pushed, on a project whose pull requests
-- are off, is offered an Open pull request button (a pull_request_offer notice).
ALTER TABLE chat_notices DROP CONSTRAINT chat_notices_kind_check;
ALTER TABLE chat_notices ADD CONSTRAINT chat_notices_kind_check
    CHECK (kind IN ('text', 'workspace_failed', 'approval', 'approval_decided', 'pull_request_offer'));

-- +goose Down
DELETE FROM chat_notices WHERE kind = 'pull_request_offer';
ALTER TABLE chat_notices DROP CONSTRAINT chat_notices_kind_check;
ALTER TABLE chat_notices ADD CONSTRAINT chat_notices_kind_check
    CHECK (kind IN ('text', 'workspace_failed', 'approval', 'approval_decided'));
