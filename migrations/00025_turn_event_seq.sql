-- +goose Up
-- A workspace's events are numbered from 1 in the workspace itself: a global counter
-- let one tenant watch how busy the others are. The next number is kept on the
-- workspace row, which each insert of events updates (and so locks): writers of one
-- workspace take turns, and its numbers commit in order.
ALTER TABLE workspaces ADD COLUMN event_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE turn_events ADD COLUMN seq bigint;
UPDATE turn_events t SET seq = n.rn
FROM (SELECT id, row_number() OVER (PARTITION BY workspace_id ORDER BY id) AS rn FROM turn_events) n
WHERE n.id = t.id;
UPDATE workspaces w SET event_seq = m.s
FROM (SELECT workspace_id, max(seq) AS s FROM turn_events GROUP BY workspace_id) m
WHERE m.workspace_id = w.id;
ALTER TABLE turn_events ALTER COLUMN seq SET NOT NULL;
-- ListTurnEvents: a workspace's events after a position.
CREATE UNIQUE INDEX turn_events_workspace_seq ON turn_events (workspace_id, seq);
DROP INDEX turn_events_workspace;

-- +goose Down
CREATE INDEX turn_events_workspace ON turn_events (workspace_id, id);
DROP INDEX turn_events_workspace_seq;
ALTER TABLE turn_events DROP COLUMN seq;
ALTER TABLE workspaces DROP COLUMN event_seq;
