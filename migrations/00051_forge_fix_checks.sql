-- +goose Up
-- How many failed checks of a workspace's pull request become its follow-ups (0: none).
ALTER TABLE project_forge_events ADD COLUMN fix_checks integer NOT NULL DEFAULT 0;

-- The failed checks taken on a project's pull request: a check (run or status id) is
-- taken once (a redelivery finds it), the fixes sent are counted against the limit,
-- and the one row with fix false records that the hub said the limit was reached.
CREATE TABLE forge_check_fixes (
    project_id  text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    pull_number bigint NOT NULL,
    check_key   text NOT NULL,
    fix         boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (project_id, pull_number, check_key)
);

-- +goose Down
DROP TABLE forge_check_fixes;
ALTER TABLE project_forge_events DROP COLUMN fix_checks;
