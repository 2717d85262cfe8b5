-- +goose Up
-- A project's trigger label: an issue given it starts a workspace with the issue as
-- the prompt ('' = none).
ALTER TABLE project_forge_events ADD COLUMN trigger_label text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE project_forge_events DROP COLUMN trigger_label;
