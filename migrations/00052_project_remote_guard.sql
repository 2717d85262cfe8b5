-- +goose Up
-- A repository an account's owner gave in the app: the hub's git reaches it only at
-- public addresses, checked and pinned at each command.
ALTER TABLE projects ADD COLUMN remote_guarded boolean NOT NULL DEFAULT false;
-- Those added before the column: the audit log names who added each project, and a
-- member (not the operator's command) means the app.
UPDATE projects p SET remote_guarded = true
  FROM audit_log a
 WHERE a.account_id = p.account_id AND a.target = p.id
   AND a.action = 'project.added' AND a.actor LIKE 'member:%';

-- +goose Down
ALTER TABLE projects DROP COLUMN remote_guarded;
