-- +goose Up
-- A project's environment (design.md, "Environments"): its own settings, which win
-- over the repository's .wshub/environment.json; NULL when it has none. Not secret:
-- secrets live in project_secrets.
ALTER TABLE projects ADD COLUMN environment jsonb;
-- The environment a workspace was set up with (its variables, update script, caches),
-- read by its turns and resumes; NULL when it has none. Kept out of the workspace's
-- usual columns: only those two read it.
ALTER TABLE workspaces ADD COLUMN environment jsonb;

-- A project's secrets: sealed bound to the project (as its credential is), given to
-- setup and update scripts, and to turns only when agent is set. Names are listed,
-- values never shown.
CREATE TABLE project_secrets (
    project_id   text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name         text NOT NULL,
    value_sealed bytea NOT NULL,
    agent        boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    -- A project's secrets in name order (setup, the list): the primary key.
    PRIMARY KEY (project_id, name)
);

-- A project's saved caches: the blob holding a tar of the paths one cache entry of its
-- environment names, by scope (the base branch whose workspaces may read it) and key
-- (the hash of the entry's paths and key files). Written by setup only.
CREATE TABLE project_caches (
    project_id   text NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    scope        text NOT NULL,
    key          text NOT NULL,
    blob_key     text NOT NULL,
    bytes        bigint NOT NULL CHECK (bytes >= 0),
    files        integer NOT NULL CHECK (files >= 0),
    -- A remote runtime uploads an archive in parts, each a blob: blob_key, then
    -- blob_key-1, blob_key-2, ...; a hub's own save is one part.
    parts        integer NOT NULL DEFAULT 1 CHECK (parts >= 1),
    created_at   timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, scope, key)
);
-- Eviction: a project's caches least recently used first.
CREATE INDEX project_caches_lru ON project_caches (project_id, last_used_at);

-- +goose Down
DROP TABLE project_caches;
DROP TABLE project_secrets;
ALTER TABLE workspaces DROP COLUMN environment;
ALTER TABLE projects DROP COLUMN environment;
