-- +goose Up
-- What the last turn left: the branch's newest commit by the hub, and how the last push
-- went ('pushed', 'refused', or '' when the project does not push or nothing was).
ALTER TABLE workspaces ADD COLUMN head_commit text NOT NULL DEFAULT '',
    ADD COLUMN last_push text NOT NULL DEFAULT '' CHECK (last_push IN ('', 'pushed', 'refused'));

-- +goose Down
ALTER TABLE workspaces DROP COLUMN last_push, DROP COLUMN head_commit;
