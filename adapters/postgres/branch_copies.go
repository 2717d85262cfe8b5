package postgres

import (
	"context"

	"github.com/wshub/wshub/core"
)

// BranchCopies keeps the shared record of remote workspaces' branches (table
// branch_copies, migration 00038): every statement goes by its primary key.
type BranchCopies struct {
	s *Store
}

var _ core.BranchCopies = (*BranchCopies)(nil)

// NewBranchCopies returns the statements on s's pool.
func NewBranchCopies(s *Store) *BranchCopies { return &BranchCopies{s: s} }

type branchCopyRow struct {
	WorkspaceID string `db:"workspace_id"`
	Base        string `db:"base"`
	Head        string `db:"head"`
	Bundle      string `db:"bundle"`
	BundleBytes int64  `db:"bundle_bytes"`
}

// BranchCopy reads one row; none is core.ErrNoRows.
func (b *BranchCopies) BranchCopy(ctx context.Context, workspaceID string) (_ *core.BranchCopy, err error) {
	defer wrapErr(&err, "branch copy of %s", workspaceID)
	var r branchCopyRow
	if err := b.s.db.GetContext(ctx, &r, `SELECT workspace_id, base, head, bundle, bundle_bytes
		FROM branch_copies WHERE workspace_id = $1`, workspaceID); err != nil {
		return nil, mapErr(err)
	}
	return &core.BranchCopy{WorkspaceID: r.WorkspaceID, Base: r.Base, Head: r.Head, Bundle: r.Bundle, BundleBytes: r.BundleBytes}, nil
}

// CreateBranchCopy inserts the first row; a row already there is left as it is.
func (b *BranchCopies) CreateBranchCopy(ctx context.Context, c core.BranchCopy) (_ bool, err error) {
	defer wrapErr(&err, "create branch copy of %s", c.WorkspaceID)
	res, err := b.s.db.ExecContext(ctx, `INSERT INTO branch_copies (workspace_id, base, head, bundle, bundle_bytes)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id) DO NOTHING`, c.WorkspaceID, c.Base, c.Head, c.Bundle, c.BundleBytes)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// SwapBranchCopy is the compare-and-set on head: the row's lock orders two replicas'
// updates, and the second finds the head moved.
func (b *BranchCopies) SwapBranchCopy(ctx context.Context, c core.BranchCopy, oldHead string) (_ bool, err error) {
	defer wrapErr(&err, "move branch copy of %s", c.WorkspaceID)
	res, err := b.s.db.ExecContext(ctx, `UPDATE branch_copies SET head = $2, bundle = $3, bundle_bytes = $4, updated_at = now()
		WHERE workspace_id = $1 AND head = $5`, c.WorkspaceID, c.Head, c.Bundle, c.BundleBytes, oldHead)
	if err != nil {
		return false, mapErr(err)
	}
	n, err := res.RowsAffected()
	return n == 1, mapErr(err)
}

// DeleteBranchCopy deletes the row, if any.
func (b *BranchCopies) DeleteBranchCopy(ctx context.Context, workspaceID string) (err error) {
	defer wrapErr(&err, "delete branch copy of %s", workspaceID)
	_, err = b.s.db.ExecContext(ctx, `DELETE FROM branch_copies WHERE workspace_id = $1`, workspaceID)
	return mapErr(err)
}
