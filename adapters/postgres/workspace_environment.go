package postgres

import "context"

// SetWorkspaceEnvironment records a workspace's environment while the lease is held.
func (q queries) SetWorkspaceEnvironment(ctx context.Context, id, token string, env []byte) (err error) {
	defer wrapErr(&err, "set workspace environment")
	_, err = q.exec(ctx, `UPDATE workspaces SET environment = $3 WHERE id = $1 AND ($2 = '' OR lease_token = $2)`, id, token, jsonOrNull(env))
	return err
}

// WorkspaceEnvironment reads it by primary key.
func (q queries) WorkspaceEnvironment(ctx context.Context, id string) (_ []byte, err error) {
	defer wrapErr(&err, "workspace environment")
	var env []byte
	err = q.get(ctx, &env, `SELECT environment FROM workspaces WHERE id = $1`, id)
	return env, err
}
