package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

// SetWorkspacePull records a workspace's pull request as the forge answered.
func (q queries) SetWorkspacePull(ctx context.Context, workspaceID string, p core.WorkspacePull) (err error) {
	defer wrapErr(&err, "set workspace pull request")
	_, err = q.exec(ctx, `UPDATE workspaces SET pull_number = $2, pull_url = $3, pull_state = $4, pull_error = $5,
		pull_checked_at = $6 WHERE id = $1`, workspaceID, p.Number, p.URL, p.State, p.Error, nullTime(p.CheckedAt))
	return err
}

// RequestPull marks that a person asked for the workspace's pull request.
func (q queries) RequestPull(ctx context.Context, workspaceID string) (err error) {
	defer wrapErr(&err, "request pull request")
	_, err = q.exec(ctx, `UPDATE workspaces SET pull_requested = true WHERE id = $1`, workspaceID)
	return err
}

// ClaimPullCheck moves the check time of an open pull request to now when it is older
// than before: of replicas reading the workspace at once, one asks the forge.
func (q queries) ClaimPullCheck(ctx context.Context, workspaceID string, before, now time.Time) (_ bool, err error) {
	defer wrapErr(&err, "claim pull request check")
	n, err := q.exec(ctx, `UPDATE workspaces SET pull_checked_at = $3 WHERE id = $1 AND pull_state = 'open'
		AND (pull_checked_at IS NULL OR pull_checked_at < $2)`, workspaceID, before, now)
	return n == 1, err
}
