-- +goose Up
-- A removed project (wshub admin project remove) keeps its row: archived and deleted
-- workspaces still name it. It is gone from listings and takes no new workspace; its
-- mirror is deleted from disk.
ALTER TABLE projects ADD COLUMN removed_at timestamptz;

-- +goose Down
ALTER TABLE projects DROP COLUMN removed_at;
