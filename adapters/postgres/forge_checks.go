package postgres

import (
	"context"
	"time"
)

// PullOfCommit finds the workspace through workspaces_project_branch_live (project_id
// leads it; a project's live workspaces are few next to the table).
func (q queries) PullOfCommit(ctx context.Context, projectID, sha string) (_ int64, err error) {
	defer wrapErr(&err, "pull request of commit")
	var n int64
	err = q.get(ctx, &n, `SELECT pull_number FROM workspaces
		WHERE project_id = $1 AND lower(head_commit) = $2 AND pull_number > 0 AND state <> 'deleted'
		ORDER BY created_at DESC, id DESC LIMIT 1`, projectID, sha)
	return n, err
}

// ForgeCheckFixes reads a pull request's rows by the primary key's prefix.
func (q queries) ForgeCheckFixes(ctx context.Context, projectID string, pull int64) (_ map[string]bool, err error) {
	defer wrapErr(&err, "forge check fixes")
	var rows []struct {
		Key string `db:"check_key"`
		Fix bool   `db:"fix"`
	}
	if err := q.selectAll(ctx, &rows, `SELECT check_key, fix FROM forge_check_fixes
		WHERE project_id = $1 AND pull_number = $2`, projectID, pull); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.Key] = r.Fix
	}
	return out, nil
}

// AddForgeCheckFix records a check taken; the first record of a key stays.
func (q queries) AddForgeCheckFix(ctx context.Context, projectID string, pull int64, key string, fix bool, at time.Time) (err error) {
	defer wrapErr(&err, "add forge check fix")
	_, err = q.exec(ctx, `INSERT INTO forge_check_fixes (project_id, pull_number, check_key, fix, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, projectID, pull, key, fix, at)
	return err
}
