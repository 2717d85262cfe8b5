-- +goose Up
-- Each project's own credential for the hub's git and forge calls (an HTTPS token, an
-- SSH deploy key or a GitHub App), sealed bound to the project: the hub-wide one is a
-- fallback for projects without. The kind is kept in the clear to be shown; the
-- credential never is.
ALTER TABLE projects
    ADD COLUMN credential_kind text NOT NULL DEFAULT ''
        CHECK (credential_kind IN ('', 'token', 'ssh_key', 'github_app')),
    ADD COLUMN credential_sealed bytea,
    ADD CONSTRAINT projects_credential_sealed CHECK ((credential_kind = '') = (credential_sealed IS NULL)),
    -- Where the repository is reviewed, and when the hub opens a pull request there.
    ADD COLUMN forge text NOT NULL DEFAULT '' CHECK (forge IN ('', 'github', 'gitlab', 'gitea')),
    ADD COLUMN pull_requests text NOT NULL DEFAULT 'off' CHECK (pull_requests IN ('off', 'draft', 'ready'));

-- +goose Down
ALTER TABLE projects DROP CONSTRAINT projects_credential_sealed,
    DROP COLUMN credential_kind, DROP COLUMN credential_sealed, DROP COLUMN forge, DROP COLUMN pull_requests;
