-- +goose NO TRANSACTION
-- +goose Up
-- PruneCronRuns: sweep tick records by age (the primary key leads with the job name).
-- Built CONCURRENTLY like 00006: the table has grown a row per sweep tick until now.
CREATE INDEX CONCURRENTLY cron_runs_tick ON cron_runs (tick);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS cron_runs_tick;
