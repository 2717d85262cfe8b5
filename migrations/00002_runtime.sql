-- +goose Up
-- Runtime: leases for the workspace worker (reconciler and turn runner), the agent's
-- session, the checkout, and the times lifecycle sweeps read.
ALTER TABLE workspaces
    ADD COLUMN lease_token      text,
    ADD COLUMN lease_expires_at timestamptz,
    ADD COLUMN agent_session    text NOT NULL DEFAULT '',
    ADD COLUMN checkout_path    text NOT NULL DEFAULT '',
    ADD COLUMN last_activity_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN state_changed_at timestamptz NOT NULL DEFAULT now();

-- ClaimWorkspaces: workspaces in a transitional state.
CREATE INDEX workspaces_transitional ON workspaces (updated_at)
    WHERE state IN ('queued', 'provisioning', 'setup', 'resuming', 'pausing', 'archiving', 'deleting');
-- Lifecycle sweeps: idle ready workspaces, long-paused, long-archived.
CREATE INDEX workspaces_lifecycle ON workspaces (state, state_changed_at)
    WHERE state IN ('ready', 'paused', 'archived');

-- ExpireMessages: pending messages by age.
CREATE INDEX messages_pending_age ON messages (created_at) WHERE status = 'pending';

-- One row per (job, tick): a cron tick runs once across replicas.
CREATE TABLE cron_runs (
    job        text NOT NULL,
    tick       timestamptz NOT NULL,
    started_at timestamptz NOT NULL,
    PRIMARY KEY (job, tick)
);

-- +goose Down
DROP TABLE cron_runs;
DROP INDEX messages_pending_age;
DROP INDEX workspaces_lifecycle;
DROP INDEX workspaces_transitional;
ALTER TABLE workspaces
    DROP COLUMN lease_token, DROP COLUMN lease_expires_at, DROP COLUMN agent_session,
    DROP COLUMN checkout_path, DROP COLUMN last_activity_at, DROP COLUMN state_changed_at;
