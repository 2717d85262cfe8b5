-- +goose Up
-- Whether an account pays by billing period (and so needs a current one to create
-- workspaces and send messages). New accounts are metered unless said otherwise.
-- Accounts made before this column existed keep how they were treated: those with no
-- period end were not checked (not metered), those with one were.
ALTER TABLE accounts ADD COLUMN metered boolean NOT NULL DEFAULT true;
UPDATE accounts SET metered = (billing_period_end IS NOT NULL);

-- +goose Down
ALTER TABLE accounts DROP COLUMN metered;
