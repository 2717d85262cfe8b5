-- +goose Up
CREATE TABLE accounts (
    id                 text PRIMARY KEY,
    name               text NOT NULL,
    entitled           boolean NOT NULL DEFAULT false,
    billing_hold       boolean NOT NULL DEFAULT false,
    billing_period_end timestamptz,
    created_at         timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id         text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name       text NOT NULL,
    hash       bytea NOT NULL,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);
-- AccountByKeyHash: every authenticated request.
CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);

CREATE TABLE projects (
    id             text PRIMARY KEY,
    account_id     text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    repository     text NOT NULL,
    display_name   text NOT NULL,
    default_branch text NOT NULL DEFAULT '',
    state          text NOT NULL CHECK (state IN ('connected', 'preparing', 'ready', 'failed')),
    failure_reason text NOT NULL DEFAULT '',
    push           boolean NOT NULL DEFAULT false,
    mirror_path    text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL
);
-- ListProjects.
CREATE INDEX projects_account ON projects (account_id, created_at, id);

CREATE TABLE workspaces (
    id                     text PRIMARY KEY,
    account_id             text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    project_id             text NOT NULL REFERENCES projects(id),
    provider_id            text NOT NULL,
    agent                  text NOT NULL,
    model                  text NOT NULL,
    runtime_mode           text NOT NULL,
    branch                 text NOT NULL,
    base_ref               text NOT NULL,
    origin                 text NOT NULL,
    state                  text NOT NULL CHECK (state IN ('queued', 'provisioning', 'setup', 'ready', 'pausing', 'paused',
                               'resuming', 'archiving', 'archived', 'deleting', 'deleted', 'failed')),
    status_code            text NOT NULL,
    startup_phase          text NOT NULL,
    runtime_state          text NOT NULL,
    latest_seq             bigint NOT NULL DEFAULT 0,
    last_turn_id           text,
    last_turn_outcome      text,
    last_turn_completed_at timestamptz,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);
-- ListWorkspaces (oldest first), NewestWorkspace.
CREATE INDEX workspaces_account_live ON workspaces (account_id, created_at, id) WHERE state <> 'deleted';
-- One live workspace per (project, branch): WorkspaceUsingBranch, and the race-safe guard.
CREATE UNIQUE INDEX workspaces_project_branch_live ON workspaces (project_id, branch) WHERE state <> 'deleted';

CREATE TABLE messages (
    id              text PRIMARY KEY,
    workspace_id    text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    seq             bigint NOT NULL,
    role            text NOT NULL CHECK (role IN ('user', 'assistant')),
    text_sealed     bytea NOT NULL,
    status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'settled', 'failed', 'expired')),
    turn_id         text NOT NULL,
    outcome         text CHECK (outcome IN ('completed', 'interrupted', 'error')),
    asset_ids       text[] NOT NULL DEFAULT '{}',
    failure_code    text,
    failure_agent   text,
    failure_sealed  bytea,
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz,
    UNIQUE (workspace_id, seq)
);
-- agentStatus (EXISTS open user message) and the turn runner's queue.
CREATE INDEX messages_open ON messages (workspace_id, seq) WHERE role = 'user' AND status IN ('pending', 'delivered');

CREATE TABLE assets (
    id            text PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    workspace_id  text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    mime_type     text NOT NULL,
    original_name text NOT NULL,
    size_bytes    bigint NOT NULL,
    sha256        bytea NOT NULL,
    blob_key      text NOT NULL,
    created_at    timestamptz NOT NULL
);
-- AssetsByID, GetAsset.
CREATE INDEX assets_workspace ON assets (workspace_id, id);

CREATE TABLE idempotency_receipts (
    account_id  text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    scope       text NOT NULL,
    key         text NOT NULL,
    fingerprint bytea NOT NULL,
    resource_id text NOT NULL,
    result      jsonb,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (account_id, scope, key)
);
-- Receipt pruning after the retention period.
CREATE INDEX idempotency_receipts_created ON idempotency_receipts (created_at);

CREATE TABLE webhooks (
    position      bigserial UNIQUE,
    id            text PRIMARY KEY,
    account_id    text NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    url           text NOT NULL,
    description   text NOT NULL DEFAULT '',
    secret_sealed bytea NOT NULL,
    created_at    timestamptz NOT NULL
);
-- ListWebhooks (registration order), CountWebhooks.
CREATE INDEX webhooks_account ON webhooks (account_id, position);

-- +goose Down
DROP TABLE webhooks;
DROP TABLE idempotency_receipts;
DROP TABLE assets;
DROP TABLE messages;
DROP TABLE workspaces;
DROP TABLE projects;
DROP TABLE api_keys;
DROP TABLE accounts;
