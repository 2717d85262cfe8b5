-- +goose Up
-- What agent turns in a project's workspaces may reach: 'full' network, or 'none'
-- (the sandbox gets a network namespace of its own with only a loopback).
ALTER TABLE projects ADD COLUMN network text NOT NULL DEFAULT 'full'
    CHECK (network IN ('full', 'none'));

-- +goose Down
ALTER TABLE projects DROP COLUMN network;
