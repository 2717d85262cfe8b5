-- +goose Up
-- Why the last turn failed (its failure code, api.md 2.5; '' when it did not), kept on
-- the workspace row by the turn's transaction as its outcome is, so the app's list can
-- say "failed: the agent exited with an error" without a query per workspace.
ALTER TABLE workspaces ADD COLUMN last_turn_failure text NOT NULL DEFAULT '';
UPDATE workspaces w SET last_turn_failure = m.failure_code
    FROM messages m
    WHERE w.last_turn_outcome = 'error' AND m.workspace_id = w.id AND m.turn_id = w.last_turn_id
      AND m.role = 'assistant' AND m.failure_code IS NOT NULL;

-- +goose Down
ALTER TABLE workspaces DROP COLUMN last_turn_failure;
