-- +goose Up
-- The hub's copy of each remote workspace's branch, shared by replicas that share no
-- disk: the commit the branch started from, its head, and the blob (WSHUB_BLOBS) that
-- holds a git bundle of its commits since base. Each replica keeps a local repository
-- as a cache and brings it up to this row before it serves a checkout, takes commits
-- or pushes. The head moves by compare-and-set (UPDATE ... WHERE head = old), so of two
-- replicas taking commits at once one wins and the other's are refused, not merged.
CREATE TABLE branch_copies (
    workspace_id text PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
    base         text NOT NULL,
    head         text NOT NULL,
    -- The blob of the bundle base..head; '' while head is base (nothing to bundle).
    bundle       text NOT NULL DEFAULT '',
    bundle_bytes bigint NOT NULL DEFAULT 0,
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE branch_copies;
