-- +goose Up
-- Why a workspace is in its state, in words fit to show its owner (set when it fails:
-- git's reason for a failed checkout); the opaque statusCode stays as it is.
ALTER TABLE workspaces ADD COLUMN status_detail text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE workspaces DROP COLUMN status_detail;
