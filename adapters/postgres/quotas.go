package postgres

import "context"

// CountLiveWorkspaces reads the account's rows of workspaces_account_live (at most
// its quota of them, plus the archived and failed it keeps).
func (q queries) CountLiveWorkspaces(ctx context.Context, accountID string) (_ int, err error) {
	defer wrapErr(&err, "count live workspaces")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM workspaces
		WHERE account_id = $1 AND state NOT IN ('archiving', 'archived', 'deleting', 'deleted', 'failed')`, accountID)
	return n, err
}

// CountOpenMessages reads the workspace's rows of the partial index messages_open.
func (q queries) CountOpenMessages(ctx context.Context, workspaceID string) (_ int, err error) {
	defer wrapErr(&err, "count open messages")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM messages
		WHERE workspace_id = $1 AND role = 'user' AND status IN ('pending', 'delivered')`, workspaceID)
	return n, err
}
