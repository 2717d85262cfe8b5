-- +goose Up
-- Schedules: a prompt run on a cron expression in a time zone, each run starting a
-- workspace (mode 'new') or sending to the schedule's one standing workspace.
-- next_tick_at is the first tick not yet run; the runner claims due rows by it.
CREATE TABLE schedules (
    id                    text PRIMARY KEY,
    account_id            text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id            text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name                  text NOT NULL,
    agent                 text NOT NULL,
    model                 text NOT NULL,
    prompt_sealed         bytea NOT NULL,
    cron                  text NOT NULL,
    zone                  text NOT NULL,
    mode                  text NOT NULL CHECK (mode IN ('new', 'standing')),
    paused                boolean NOT NULL DEFAULT false,
    standing_workspace_id text,
    next_tick_at          timestamptz NOT NULL,
    created_at            timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL
);
-- ListSchedules (an account's, oldest first) and ListProjectSchedules.
CREATE INDEX schedules_account ON schedules (account_id, created_at, id);
CREATE INDEX schedules_project ON schedules (project_id, created_at, id);
-- DueSchedules and NextScheduleTick: the runner's query, over schedules not paused.
CREATE INDEX schedules_due ON schedules (next_tick_at) WHERE NOT paused;

-- The run log: what each tick (or "run now") did. The last 50 per schedule are kept.
CREATE TABLE schedule_runs (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    schedule_id  text NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    tick         timestamptz NOT NULL,
    outcome      text NOT NULL CHECK (outcome IN ('started', 'sent', 'skipped_late', 'refused', 'failed')),
    code         text NOT NULL DEFAULT '',
    reason       text NOT NULL DEFAULT '',
    workspace_id text,
    recorded_at  timestamptz NOT NULL
);
-- ListScheduleRuns (newest first) and PruneScheduleRuns.
CREATE INDEX schedule_runs_schedule ON schedule_runs (schedule_id, seq DESC);

-- +goose Down
DROP TABLE schedule_runs;
DROP TABLE schedules;
