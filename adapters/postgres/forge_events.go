package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

type forgeHookRow struct {
	ProjectID     string    `db:"project_id"`
	AccountID     string    `db:"account_id"`
	Forge         string    `db:"forge"`
	RepositoryKey string    `db:"repository_key"`
	Handle        string    `db:"handle"`
	TriggerLabel  string    `db:"trigger_label"`
	FixChecks     int       `db:"fix_checks"`
	Sealed        []byte    `db:"secret_sealed"`
	UpdatedAt     time.Time `db:"updated_at"`
}

func (r forgeHookRow) hook() *core.ForgeHook {
	return &core.ForgeHook{ProjectID: r.ProjectID, AccountID: r.AccountID, Forge: r.Forge, RepositoryKey: r.RepositoryKey,
		Handle: r.Handle, TriggerLabel: r.TriggerLabel, FixChecks: r.FixChecks, SealedSecret: r.Sealed, UpdatedAt: r.UpdatedAt}
}

const forgeHookColumns = `h.project_id, h.account_id, h.forge, h.repository_key, h.handle, h.trigger_label, h.fix_checks, h.secret_sealed, h.updated_at`

// PutForgeHook inserts or replaces a project's forge events by the primary key.
func (q queries) PutForgeHook(ctx context.Context, h *core.ForgeHook) (err error) {
	defer wrapErr(&err, "put forge hook")
	_, err = q.exec(ctx, `INSERT INTO project_forge_events (project_id, account_id, forge, repository_key, handle, trigger_label,
			fix_checks, secret_sealed, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (project_id) DO UPDATE SET forge = EXCLUDED.forge, repository_key = EXCLUDED.repository_key,
			handle = EXCLUDED.handle, trigger_label = EXCLUDED.trigger_label, fix_checks = EXCLUDED.fix_checks, secret_sealed = EXCLUDED.secret_sealed,
			updated_at = EXCLUDED.updated_at`,
		h.ProjectID, h.AccountID, h.Forge, h.RepositoryKey, h.Handle, h.TriggerLabel, h.FixChecks, h.SealedSecret, h.UpdatedAt)
	return err
}

// GetForgeHook reads by the primary key.
func (q queries) GetForgeHook(ctx context.Context, projectID string) (_ *core.ForgeHook, err error) {
	defer wrapErr(&err, "get forge hook")
	var r forgeHookRow
	if err := q.get(ctx, &r, `SELECT `+forgeHookColumns+` FROM project_forge_events h WHERE h.project_id = $1`, projectID); err != nil {
		return nil, err
	}
	return r.hook(), nil
}

// DeleteForgeHook deletes by the primary key (none: nothing to do).
func (q queries) DeleteForgeHook(ctx context.Context, projectID string) (err error) {
	defer wrapErr(&err, "delete forge hook")
	_, err = q.exec(ctx, `DELETE FROM project_forge_events WHERE project_id = $1`, projectID)
	return err
}

// ForgeHooksOf reads the hooks of live projects on a repository (index
// project_forge_events_repository), oldest setting first so the order is stable.
func (q queries) ForgeHooksOf(ctx context.Context, forge, key string) (_ []*core.ForgeHook, err error) {
	defer wrapErr(&err, "forge hooks of a repository")
	var rows []forgeHookRow
	if err := q.selectAll(ctx, &rows, `SELECT `+forgeHookColumns+` FROM project_forge_events h
		JOIN projects p ON p.id = h.project_id AND p.removed_at IS NULL
		WHERE h.forge = $1 AND h.repository_key = $2 ORDER BY h.updated_at, h.project_id`, forge, key); err != nil {
		return nil, err
	}
	out := make([]*core.ForgeHook, len(rows))
	for i, r := range rows {
		out[i] = r.hook()
	}
	return out, nil
}

// ForgeComment reads a forge thread's comment by the primary key.
func (q queries) ForgeComment(ctx context.Context, place core.ChatPlace) (_ string, err error) {
	defer wrapErr(&err, "get forge comment")
	var ref string
	err = q.get(ctx, &ref, `SELECT comment_ref FROM forge_comments
		WHERE platform = $1 AND team_id = $2 AND channel_id = $3 AND thread_id = $4`,
		place.Platform, place.TeamID, place.ChannelID, place.ThreadID)
	return ref, err
}

// SetForgeComment records a forge thread's comment; the first one recorded stays.
func (q queries) SetForgeComment(ctx context.Context, place core.ChatPlace, ref string) (err error) {
	defer wrapErr(&err, "set forge comment")
	_, err = q.exec(ctx, `INSERT INTO forge_comments (platform, team_id, channel_id, thread_id, comment_ref)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		place.Platform, place.TeamID, place.ChannelID, place.ThreadID, ref)
	return err
}

// WorkspaceOfPull finds the workspace of a project's pull request through
// workspaces_project_branch_live (project_id leads it; a project's live workspaces are
// few next to the table).
func (q queries) WorkspaceOfPull(ctx context.Context, projectID string, number int64) (_ string, err error) {
	defer wrapErr(&err, "workspace of pull request")
	var id string
	err = q.get(ctx, &id, `SELECT id FROM workspaces
		WHERE project_id = $1 AND pull_number = $2 AND state <> 'deleted'
		ORDER BY created_at DESC, id DESC LIMIT 1`, projectID, number)
	return id, err
}
