-- +goose Up
-- Discord guild bindings can limit who may start or talk (members holding one of the
-- roles) and where (these channels and their threads); empty means no limit. Slack
-- bindings leave both empty.
ALTER TABLE chat_bindings ADD COLUMN roles text[] NOT NULL DEFAULT '{}',
    ADD COLUMN channels text[] NOT NULL DEFAULT '{}';
-- GetChatThreadByThread: a Discord message names its thread (a channel of its own) but
-- not the thread's parent channel.
CREATE INDEX chat_threads_thread ON chat_threads (platform, team_id, thread_id);

-- +goose Down
DROP INDEX chat_threads_thread;
ALTER TABLE chat_bindings DROP COLUMN channels, DROP COLUMN roles;
