package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

type projectRow struct {
	ID            string    `db:"id"`
	AccountID     string    `db:"account_id"`
	Repository    string    `db:"repository"`
	DisplayName   string    `db:"display_name"`
	DefaultBranch string    `db:"default_branch"`
	State         string    `db:"state"`
	FailureReason string    `db:"failure_reason"`
	Push          bool      `db:"push"`
	Network       string    `db:"network"`
	MirrorPath    string    `db:"mirror_path"`
	CreatedAt     time.Time `db:"created_at"`
	UpdatedAt     time.Time `db:"updated_at"`
}

func (r *projectRow) core() *core.Project {
	p := core.Project(*r)
	return &p
}

const projectColumns = `id, account_id, repository, display_name, default_branch, state, failure_reason, push,
	network, mirror_path, created_at, updated_at`

func (q queries) CreateProject(ctx context.Context, p *core.Project) error {
	_, err := q.exec(ctx, `INSERT INTO projects (`+projectColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		p.ID, p.AccountID, p.Repository, p.DisplayName, p.DefaultBranch, p.State, p.FailureReason, p.Push,
		p.Network, p.MirrorPath, p.CreatedAt, p.UpdatedAt)
	return err
}

func (q queries) UpdateProject(ctx context.Context, p *core.Project) error {
	_, err := q.exec(ctx, `UPDATE projects SET display_name = $2, default_branch = $3, state = $4, failure_reason = $5,
		push = $6, network = $7, mirror_path = $8, updated_at = $9 WHERE id = $1`,
		p.ID, p.DisplayName, p.DefaultBranch, p.State, p.FailureReason, p.Push, p.Network, p.MirrorPath, p.UpdatedAt)
	return err
}

func (q queries) GetProject(ctx context.Context, accountID, id string) (*core.Project, error) {
	var r projectRow
	if err := q.get(ctx, &r, `SELECT `+projectColumns+` FROM projects WHERE account_id = $1 AND id = $2`, accountID, id); err != nil {
		return nil, err
	}
	return r.core(), nil
}

func (q queries) GetProjectByID(ctx context.Context, id string) (*core.Project, error) {
	var r projectRow
	if err := q.get(ctx, &r, `SELECT `+projectColumns+` FROM projects WHERE id = $1`, id); err != nil {
		return nil, err
	}
	return r.core(), nil
}

// ListProjects uses projects_account.
func (q queries) ListProjects(ctx context.Context, accountID string) ([]*core.Project, error) {
	var rows []projectRow
	if err := q.selectAll(ctx, &rows, `SELECT `+projectColumns+` FROM projects WHERE account_id = $1
		ORDER BY created_at, id`, accountID); err != nil {
		return nil, err
	}
	out := make([]*core.Project, len(rows))
	for i := range rows {
		out[i] = rows[i].core()
	}
	return out, nil
}
