package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type approvalRow struct {
	ID          string              `db:"id"`
	WorkspaceID string              `db:"workspace_id"`
	TurnID      string              `db:"turn_id"`
	Key         string              `db:"request_key"`
	Status      core.ApprovalStatus `db:"status"`
	DecidedBy   string              `db:"decided_by"`
	InputSHA256 string              `db:"input_sha256"`
	CreatedAt   time.Time           `db:"created_at"`
	ExpiresAt   time.Time           `db:"expires_at"`
	DecidedAt   *time.Time          `db:"decided_at"`
	DeciderKind string              `db:"decider_kind"`
	DeciderID   string              `db:"decider_id"`
	DeciderName string              `db:"decider_name"`
}

func (r *approvalRow) approval() *core.Approval {
	a := &core.Approval{ID: r.ID, WorkspaceID: r.WorkspaceID, TurnID: r.TurnID, Key: r.Key, Status: r.Status,
		DecidedBy: r.DecidedBy, InputSHA256: r.InputSHA256, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, DecidedAt: r.DecidedAt}
	if r.DeciderKind != "" {
		a.Decider = &core.Author{Kind: r.DeciderKind, ID: r.DeciderID, Name: r.DeciderName}
	}
	return a
}

const approvalColumns = `id, workspace_id, turn_id, request_key, status, decided_by, input_sha256, created_at, expires_at,
	decided_at, decider_kind, decider_id, decider_name`

// InsertApproval inserts unless the (workspace, turn, key) is known, and reads the
// row that holds the ask either way.
func (q queries) InsertApproval(ctx context.Context, a *core.Approval) (_ *core.Approval, inserted bool, err error) {
	defer wrapErr(&err, "insert approval")
	n, err := q.exec(ctx, `INSERT INTO approvals (id, workspace_id, turn_id, request_key, status, decided_by, input_sha256,
			created_at, expires_at, decided_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (workspace_id, turn_id, request_key) DO NOTHING`,
		a.ID, a.WorkspaceID, a.TurnID, a.Key, a.Status, a.DecidedBy, a.InputSHA256, a.CreatedAt, a.ExpiresAt, a.DecidedAt)
	if err != nil {
		return nil, false, err
	}
	var r approvalRow
	if err := q.get(ctx, &r, `SELECT `+approvalColumns+` FROM approvals
		WHERE workspace_id = $1 AND turn_id = $2 AND request_key = $3`, a.WorkspaceID, a.TurnID, a.Key); err != nil {
		return nil, false, err
	}
	return r.approval(), n == 1, nil
}

// LockTurnApprovals takes a transaction-scoped advisory lock named by the turn: it
// waits only for other asks of the same turn (no row lock on the busy workspace row).
func (q queries) LockTurnApprovals(ctx context.Context, workspaceID, turnID string) (err error) {
	defer wrapErr(&err, "lock turn approvals")
	_, err = q.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('wshub.approvals.' || $1 || '.' || $2))`, workspaceID, turnID)
	return err
}

// CountApprovals reads the unique index's (workspace_id, turn_id) prefix.
func (q queries) CountApprovals(ctx context.Context, workspaceID, turnID string) (_ int, err error) {
	defer wrapErr(&err, "count approvals")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM approvals WHERE workspace_id = $1 AND turn_id = $2`, workspaceID, turnID)
	return n, err
}

// GetApproval reads one approval of a workspace.
func (q queries) GetApproval(ctx context.Context, workspaceID, id string) (_ *core.Approval, err error) {
	defer wrapErr(&err, "get approval")
	var r approvalRow
	if err := q.get(ctx, &r, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1 AND workspace_id = $2`, id, workspaceID); err != nil {
		return nil, err
	}
	return r.approval(), nil
}

// DecideApproval is conditional on the row being pending: of two decisions at once,
// the second waits for the first's row lock and then matches nothing.
func (q queries) DecideApproval(ctx context.Context, id string, status core.ApprovalStatus, by core.Author, at time.Time) (_ bool, err error) {
	defer wrapErr(&err, "decide approval")
	n, err := q.exec(ctx, `UPDATE approvals SET status = $2, decided_by = $3, decided_at = $4, decider_kind = $5,
			decider_id = $6, decider_name = $7
		WHERE id = $1 AND status = 'pending'`, id, status, by.DecidedBy(), at, by.Kind, by.ID, by.Name)
	return n == 1, err
}

// CloseApprovals reads approvals_pending.
func (q queries) CloseApprovals(ctx context.Context, workspaceID, turnID string, at time.Time) (_ []string, err error) {
	defer wrapErr(&err, "close approvals")
	var ids pq.StringArray
	err = q.get(ctx, &ids, `WITH closed AS (
			UPDATE approvals SET status = 'closed', decided_at = $3
			WHERE workspace_id = $1 AND turn_id = $2 AND status = 'pending' RETURNING id)
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM closed`, workspaceID, turnID, at)
	return ids, err
}
