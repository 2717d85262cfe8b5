package postgres

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type projectRow struct {
	ID            string     `db:"id"`
	AccountID     string     `db:"account_id"`
	Repository    string     `db:"repository"`
	DisplayName   string     `db:"display_name"`
	DefaultBranch string     `db:"default_branch"`
	State         string     `db:"state"`
	FailureReason string     `db:"failure_reason"`
	Push          bool       `db:"push"`
	Network       string     `db:"network"`
	Forge         string     `db:"forge"`
	PullRequests  string     `db:"pull_requests"`
	CredKind      string     `db:"credential_kind"`
	CredSealed    []byte     `db:"credential_sealed"`
	MirrorPath    string     `db:"mirror_path"`
	CreatedAt     time.Time  `db:"created_at"`
	UpdatedAt     time.Time  `db:"updated_at"`
	RemovedAt     *time.Time `db:"removed_at"`
	Environment   []byte     `db:"environment"`
	RemoteGuarded bool       `db:"remote_guarded"`
}

func (r *projectRow) core() *core.Project {
	return &core.Project{ID: r.ID, AccountID: r.AccountID, Repository: r.Repository, DisplayName: r.DisplayName,
		DefaultBranch: r.DefaultBranch, State: r.State, FailureReason: r.FailureReason, Push: r.Push, Network: r.Network,
		Forge: r.Forge, PullRequests: r.PullRequests, CredentialKind: r.CredKind, SealedCredential: r.CredSealed,
		MirrorPath: r.MirrorPath, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, RemovedAt: r.RemovedAt,
		Environment: r.Environment, RemoteGuarded: r.RemoteGuarded}
}

const projectColumns = `id, account_id, repository, display_name, default_branch, state, failure_reason, push,
	network, forge, pull_requests, credential_kind, credential_sealed, mirror_path, created_at, updated_at, removed_at, environment,
	remote_guarded`

// dest lists r's fields in projectColumns' order, for a hand scan of a row that has a
// project's columns among others (TestProjectScanMatchesItsColumns).
func (r *projectRow) dest() []any {
	return []any{&r.ID, &r.AccountID, &r.Repository, &r.DisplayName, &r.DefaultBranch, &r.State, &r.FailureReason, &r.Push,
		&r.Network, &r.Forge, &r.PullRequests, &r.CredKind, &r.CredSealed, &r.MirrorPath, &r.CreatedAt, &r.UpdatedAt, &r.RemovedAt,
		&r.Environment, &r.RemoteGuarded}
}

// qualified is a column list with each column on alias.
func qualified(columns, alias string) string {
	list := strings.Split(columns, ",")
	for i, c := range list {
		list[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(list, ", ")
}

func (q queries) CreateProject(ctx context.Context, p *core.Project) (err error) {
	defer wrapErr(&err, "create project")
	_, err = q.exec(ctx, `INSERT INTO projects (id, account_id, repository, display_name, default_branch, state,
		failure_reason, push, network, forge, pull_requests, credential_kind, credential_sealed, mirror_path, created_at, updated_at, environment,
		remote_guarded)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
		p.ID, p.AccountID, p.Repository, p.DisplayName, p.DefaultBranch, p.State, p.FailureReason, p.Push,
		p.Network, p.Forge, cmp.Or(p.PullRequests, core.PullRequestsOff), p.CredentialKind, nilIfEmpty(p.SealedCredential),
		p.MirrorPath, p.CreatedAt, p.UpdatedAt, jsonOrNull(p.Environment), p.RemoteGuarded)
	return err
}

func (q queries) UpdateProject(ctx context.Context, p *core.Project) (err error) {
	defer wrapErr(&err, "update project")
	_, err = q.exec(ctx, `UPDATE projects SET display_name = $2, default_branch = $3, state = $4, failure_reason = $5,
		push = $6, network = $7, mirror_path = $8, updated_at = $9, forge = $10, pull_requests = $11,
		credential_kind = $12, credential_sealed = $13, environment = $14 WHERE id = $1`,
		p.ID, p.DisplayName, p.DefaultBranch, p.State, p.FailureReason, p.Push, p.Network, p.MirrorPath, p.UpdatedAt,
		p.Forge, cmp.Or(p.PullRequests, core.PullRequestsOff), p.CredentialKind, nilIfEmpty(p.SealedCredential),
		jsonOrNull(p.Environment))
	return err
}

// getProject reads one project by the condition (and lock clause) given.
func (q queries) getProject(ctx context.Context, where string, args ...any) (*core.Project, error) {
	var r projectRow
	if err := q.get(ctx, &r, `SELECT `+projectColumns+` FROM projects WHERE `+where, args...); err != nil {
		return nil, err
	}
	return r.core(), nil
}

func (q queries) GetProject(ctx context.Context, accountID, id string) (_ *core.Project, err error) {
	defer wrapErr(&err, "get project")
	return q.getProject(ctx, `account_id = $1 AND id = $2`, accountID, id)
}

func (q queries) GetProjectByID(ctx context.Context, id string) (_ *core.Project, err error) {
	defer wrapErr(&err, "get project by ID")
	return q.getProject(ctx, `id = $1`, id)
}

// ShareProject reads a project that is not removed, holding it against removal
// (FOR KEY SHARE, the lock a workspace's foreign key takes anyway) until the
// transaction ends: a removal waits for the create, or the create sees the removal.
func (q queries) ShareProject(ctx context.Context, accountID, id string) (_ *core.Project, err error) {
	defer wrapErr(&err, "share project")
	return q.getProject(ctx, `account_id = $1 AND id = $2 AND removed_at IS NULL FOR KEY SHARE`, accountID, id)
}

// LockProject reads a project and locks it against creates until the transaction ends.
func (q queries) LockProject(ctx context.Context, id string) (_ *core.Project, err error) {
	defer wrapErr(&err, "lock project")
	return q.getProject(ctx, `id = $1 FOR UPDATE`, id)
}

// LiveWorkspacesOfProject lists the project's workspaces not in one of core's closed
// states (workspaces_project_branch_live covers project_id).
func (q queries) LiveWorkspacesOfProject(ctx context.Context, projectID string, closed []core.WorkspaceState) (_ []string, err error) {
	defer wrapErr(&err, "live workspaces of project")
	states := make(pq.StringArray, len(closed))
	for i, st := range closed {
		states[i] = string(st)
	}
	var ids []string
	err = q.selectAll(ctx, &ids, `SELECT id FROM workspaces WHERE project_id = $1 AND state <> ALL($2)
		ORDER BY created_at, id`, projectID, states)
	return ids, err
}

// RemoveProject marks the project removed and forgets it as a chat default: channels
// that used it fall back to the team's default, a team binding naming it to none.
func (q queries) RemoveProject(ctx context.Context, id string, at time.Time) (err error) {
	defer wrapErr(&err, "remove project")
	if _, err := q.exec(ctx, `UPDATE projects SET removed_at = $2, updated_at = $2 WHERE id = $1`, id, at); err != nil {
		return err
	}
	if _, err := q.exec(ctx, `DELETE FROM chat_channels WHERE project_id = $1`, id); err != nil {
		return err
	}
	_, err = q.exec(ctx, `UPDATE chat_bindings SET project_id = NULL, updated_at = $2 WHERE project_id = $1`, id, at)
	return err
}

// ListProjects uses projects_account.
func (q queries) ListProjects(ctx context.Context, accountID string) (_ []*core.Project, err error) {
	defer wrapErr(&err, "list projects")
	var rows []projectRow
	if err := q.selectAll(ctx, &rows, `SELECT `+projectColumns+` FROM projects WHERE account_id = $1
		AND removed_at IS NULL ORDER BY created_at, id`, accountID); err != nil {
		return nil, err
	}
	out := make([]*core.Project, len(rows))
	for i := range rows {
		out[i] = rows[i].core()
	}
	return out, nil
}

// nilIfEmpty stores an empty value as NULL.
func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// jsonOrNull is a jsonb parameter: lib/pq would send a []byte as bytea, which jsonb
// does not take.
func jsonOrNull(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
