-- +goose Up
-- Who wrote each message and who decided each approval: where they acted from (api,
-- slack, discord, app), their id there, and their name as it was then. author_member_id
-- is the member behind it when known (the app, or a chat identity the person linked),
-- for the commit's Co-authored-by; it is not a foreign key so removing a member leaves
-- the conversation as it was.
ALTER TABLE messages
    ADD COLUMN author_kind      text NOT NULL DEFAULT '',
    ADD COLUMN author_id        text NOT NULL DEFAULT '',
    ADD COLUMN author_name      text NOT NULL DEFAULT '',
    ADD COLUMN author_member_id text;

ALTER TABLE approvals
    ADD COLUMN decider_kind text NOT NULL DEFAULT '',
    ADD COLUMN decider_id   text NOT NULL DEFAULT '',
    ADD COLUMN decider_name text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE approvals DROP COLUMN decider_kind, DROP COLUMN decider_id, DROP COLUMN decider_name;
ALTER TABLE messages DROP COLUMN author_kind, DROP COLUMN author_id, DROP COLUMN author_name,
    DROP COLUMN author_member_id;
