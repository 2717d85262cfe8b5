-- +goose Up
-- The pull (merge) request a workspace's branch has on its project's forge, kept on the
-- workspace row: it is written with the turn that pushed (one transaction), read with
-- the status object (no query of its own), and its state refreshed at most once a
-- minute (pull_checked_at, claimed by compare-and-set across replicas).
ALTER TABLE workspaces
    ADD COLUMN pull_number     bigint NOT NULL DEFAULT 0,
    ADD COLUMN pull_url        text NOT NULL DEFAULT '',
    ADD COLUMN pull_state      text NOT NULL DEFAULT '' CHECK (pull_state IN ('', 'open', 'merged', 'closed')),
    -- The forge's last refusal, in words ('' when the last call succeeded).
    ADD COLUMN pull_error      text NOT NULL DEFAULT '',
    ADD COLUMN pull_checked_at timestamptz,
    -- A person asked for one on a project whose pull requests are off.
    ADD COLUMN pull_requested  boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE workspaces DROP COLUMN pull_number, DROP COLUMN pull_url, DROP COLUMN pull_state,
    DROP COLUMN pull_error, DROP COLUMN pull_checked_at, DROP COLUMN pull_requested;
