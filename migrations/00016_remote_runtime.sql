-- +goose Up
-- Remote runtimes (providers `process` and `kubernetes`): `wshub runtime` runs a
-- workspace's turns inside its machine and reaches the hub over /internal/runtime with
-- a token minted when the machine is started. The hub keeps only the token's hash.
--
-- runtime_started_at: when the machine was last started with the current token; NULL
--   means the worker must (re)start it (a new workspace, a resume, a runtime found
--   offline). runtime_starts counts starts since the runtime last said hello, so a
--   machine whose runtime never comes up fails instead of restarting for ever.
-- runtime_session: the runtime process the hub talks to (a new one ends the turn the
--   last one left unfinished); runtime_seen_at: its last call.
ALTER TABLE workspaces
    ADD COLUMN runtime_token_hash bytea,
    ADD COLUMN runtime_started_at timestamptz,
    ADD COLUMN runtime_starts     integer NOT NULL DEFAULT 0,
    ADD COLUMN runtime_session    text NOT NULL DEFAULT '',
    ADD COLUMN runtime_seen_at    timestamptz;

-- AuthenticateRuntime: one row by the token's hash.
CREATE UNIQUE INDEX workspaces_runtime_token ON workspaces (runtime_token_hash)
    WHERE runtime_token_hash IS NOT NULL;
-- SweepRuntimes: remote runtimes started and not heard from lately.
CREATE INDEX workspaces_runtime_seen ON workspaces (runtime_seen_at)
    WHERE runtime_started_at IS NOT NULL;

-- +goose Down
DROP INDEX workspaces_runtime_seen;
DROP INDEX workspaces_runtime_token;
ALTER TABLE workspaces
    DROP COLUMN runtime_seen_at,
    DROP COLUMN runtime_session,
    DROP COLUMN runtime_starts,
    DROP COLUMN runtime_started_at,
    DROP COLUMN runtime_token_hash;
