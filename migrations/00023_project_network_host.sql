-- +goose Up
-- 'host': the project's agents share the hub host's network namespace, as 'full' did
-- before it became the internet through a user-mode network stack (an explicit opt-in).
ALTER TABLE projects DROP CONSTRAINT projects_network_check;
ALTER TABLE projects ADD CONSTRAINT projects_network_check CHECK (network IN ('full', 'none', 'host'));

-- +goose Down
UPDATE projects SET network = 'full' WHERE network = 'host';
ALTER TABLE projects DROP CONSTRAINT projects_network_check;
ALTER TABLE projects ADD CONSTRAINT projects_network_check CHECK (network IN ('full', 'none'));
