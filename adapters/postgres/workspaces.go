package postgres

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type workspaceRow struct {
	ID                  string              `db:"id"`
	AccountID           string              `db:"account_id"`
	ProjectID           string              `db:"project_id"`
	ProviderID          string              `db:"provider_id"`
	Agent               string              `db:"agent"`
	Model               string              `db:"model"`
	RuntimeMode         string              `db:"runtime_mode"`
	Branch              string              `db:"branch"`
	BaseRef             string              `db:"base_ref"`
	Origin              string              `db:"origin"`
	State               core.WorkspaceState `db:"state"`
	StatusCode          string              `db:"status_code"`
	StatusDetail        string              `db:"status_detail"`
	HeadCommit          string              `db:"head_commit"`
	LastPush            string              `db:"last_push"`
	PullNumber          int64               `db:"pull_number"`
	PullURL             string              `db:"pull_url"`
	PullState           string              `db:"pull_state"`
	PullError           string              `db:"pull_error"`
	PullCheckedAt       sql.NullTime        `db:"pull_checked_at"`
	PullRequested       bool                `db:"pull_requested"`
	StartupPhase        string              `db:"startup_phase"`
	RuntimeState        string              `db:"runtime_state"`
	LatestSeq           int64               `db:"latest_seq"`
	EventSeq            int64               `db:"event_seq"`
	LastTurnID          sql.NullString      `db:"last_turn_id"`
	LastTurnOutcome     sql.NullString      `db:"last_turn_outcome"`
	LastTurnCompletedAt sql.NullTime        `db:"last_turn_completed_at"`
	LastTurnFailure     string              `db:"last_turn_failure"`
	TitleSealed         []byte              `db:"title_sealed"`
	OpenMessages        bool                `db:"open_messages"`
	AgentSession        string              `db:"agent_session"`
	CheckoutPath        string              `db:"checkout_path"`
	LeaseToken          sql.NullString      `db:"lease_token"`
	RuntimeStartedAt    sql.NullTime        `db:"runtime_started_at"`
	RuntimeStarts       int                 `db:"runtime_starts"`
	RuntimeSession      string              `db:"runtime_session"`
	RuntimeSeenAt       sql.NullTime        `db:"runtime_seen_at"`
	LastActivityAt      time.Time           `db:"last_activity_at"`
	StateChangedAt      time.Time           `db:"state_changed_at"`
	CreatedAt           time.Time           `db:"created_at"`
	UpdatedAt           time.Time           `db:"updated_at"`
	StartedByKind       string              `db:"started_by_kind"`
	StartedByID         string              `db:"started_by_id"`
	StartedByName       string              `db:"started_by_name"`
	StartedByMember     sql.NullString      `db:"started_by_member_id"`
	StartedByURL        sql.NullString      `db:"started_by_url"`
	Host                sql.NullString      `db:"host"`
}

func (r *workspaceRow) core() *core.Workspace {
	var by *core.Author
	if r.StartedByKind != "" {
		by = &core.Author{Kind: r.StartedByKind, ID: r.StartedByID, Name: r.StartedByName, MemberID: r.StartedByMember.String,
			URL: r.StartedByURL.String}
	}
	return &core.Workspace{
		StartedBy: by,
		ID:        r.ID, AccountID: r.AccountID, ProjectID: r.ProjectID, ProviderID: r.ProviderID, Agent: r.Agent,
		Model: r.Model, RuntimeMode: r.RuntimeMode, Branch: r.Branch, BaseRef: r.BaseRef, Origin: r.Origin,
		State: r.State, StatusCode: r.StatusCode, StatusDetail: r.StatusDetail, HeadCommit: r.HeadCommit, LastPush: r.LastPush, StartupPhase: r.StartupPhase, RuntimeState: r.RuntimeState,
		LatestSeq: r.LatestSeq, EventSeq: r.EventSeq, LastTurnID: r.LastTurnID.String, LastTurnOutcome: core.Outcome(r.LastTurnOutcome.String),
		LastTurnCompletedAt: timePtr(r.LastTurnCompletedAt), LastTurnFailure: r.LastTurnFailure, TitleSealed: r.TitleSealed, OpenMessages: r.OpenMessages,
		AgentSession: r.AgentSession, CheckoutPath: r.CheckoutPath, LeaseToken: r.LeaseToken.String,
		RuntimeStartedAt: timePtr(r.RuntimeStartedAt), RuntimeStarts: r.RuntimeStarts, RuntimeSession: r.RuntimeSession,
		RuntimeSeenAt:  timePtr(r.RuntimeSeenAt),
		LastActivityAt: r.LastActivityAt, StateChangedAt: r.StateChangedAt,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Host: r.Host.String,
		Pull: core.WorkspacePull{Number: r.PullNumber, URL: r.PullURL, State: r.PullState, Error: r.PullError,
			CheckedAt: timePtr(r.PullCheckedAt), Requested: r.PullRequested},
	}
}

// workspaceSelect reads a workspace with its open-message flag in the same query
// (messages_open index), so listing needs no query per workspace.
const workspaceSelect = `SELECT ` + workspaceColumns + ` FROM workspaces w `

// workspaceColumns are what workspaceRow.dest scans, on the alias w: a SELECT's list,
// or a claim's RETURNING (which reads the row as the claim left it).
const workspaceColumns = `w.id, w.account_id, w.project_id, w.provider_id, w.agent, w.model, w.runtime_mode,
	w.branch, w.base_ref, w.origin, w.state, w.status_code, w.status_detail, w.head_commit, w.last_push, w.startup_phase, w.runtime_state, w.latest_seq,
	w.event_seq, w.last_turn_id, w.last_turn_outcome, w.last_turn_completed_at, w.last_turn_failure, w.title_sealed, w.created_at, w.updated_at,
	w.agent_session, w.checkout_path, w.lease_token, w.last_activity_at, w.state_changed_at,
	w.runtime_started_at, w.runtime_starts, w.runtime_session, w.runtime_seen_at,
	w.started_by_kind, w.started_by_id, w.started_by_name, w.started_by_member_id, w.started_by_url, w.host,
	w.pull_number, w.pull_url, w.pull_state, w.pull_error, w.pull_checked_at, w.pull_requested,
	EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = w.id AND m.role = 'user'
	        AND m.status IN ('pending', 'delivered')) AS open_messages`

func (q queries) InsertWorkspace(ctx context.Context, w *core.Workspace) (err error) {
	defer wrapErr(&err, "insert workspace")
	var by core.Author
	if w.StartedBy != nil {
		by = *w.StartedBy
	}
	// The member behind a chat author is found by the identity they linked, in the
	// same statement (as a message's).
	_, err = q.exec(ctx, `INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode,
		branch, base_ref, origin, state, status_code, startup_phase, runtime_state, latest_seq, created_at, updated_at,
		last_activity_at, state_changed_at, started_by_kind, started_by_id, started_by_name, started_by_member_id, host, title_sealed, started_by_url)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17, $16, $18, $19, $20,
			COALESCE($21, `+linkedMember("$22", "$23", "$2")+`), $24, $25, $26)`,
		w.ID, w.AccountID, w.ProjectID, w.ProviderID, w.Agent, w.Model, w.RuntimeMode, w.Branch, w.BaseRef, w.Origin,
		w.State, w.StatusCode, w.StartupPhase, w.RuntimeState, w.LatestSeq, w.CreatedAt, w.UpdatedAt,
		by.Kind, by.ID, by.Name, nullString(by.MemberID), by.Via.Kind, by.Via.Subject, nullString(w.Host), w.TitleSealed, nullString(by.URL))
	return err
}

func (q queries) getWorkspace(ctx context.Context, suffix string, args ...any) (*core.Workspace, error) {
	found, err := q.queryWorkspaces(ctx, suffix, args...)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, core.ErrNoRows
	}
	return found[0], nil
}

func (q queries) GetWorkspace(ctx context.Context, accountID, id string) (_ *core.Workspace, err error) {
	defer wrapErr(&err, "get workspace")
	return q.getWorkspace(ctx, `WHERE w.account_id = $1 AND w.id = $2 AND w.state <> 'deleted'`, accountID, id)
}

func (q queries) LockWorkspace(ctx context.Context, accountID, id string) (_ *core.Workspace, err error) {
	defer wrapErr(&err, "lock workspace")
	return q.getWorkspace(ctx, `WHERE w.account_id = $1 AND w.id = $2 AND w.state <> 'deleted' FOR UPDATE OF w`, accountID, id)
}

// ListWorkspaces uses workspaces_account_live.
func (q queries) ListWorkspaces(ctx context.Context, accountID string) (_ []*core.Workspace, err error) {
	defer wrapErr(&err, "list workspaces")
	return q.queryWorkspaces(ctx, `WHERE w.account_id = $1 AND w.state <> 'deleted' ORDER BY w.created_at, w.id`, accountID)
}

// ListWorkspacePage reads workspaces_account_newest, or workspaces_member_newest for
// a member's own, from the cursor on. Only the filters given are in the statement, so
// each shape gets the plan that suits it.
func (q queries) ListWorkspacePage(ctx context.Context, p core.WorkspacePageQuery) (_ []*core.Workspace, err error) {
	defer wrapErr(&err, "list workspace page")
	where := []string{"w.account_id = $1", "w.state <> 'deleted'"}
	args := []any{p.AccountID}
	add := func(clause string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			clause = strings.Replace(clause, "?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, clause)
	}
	if p.MemberID != "" {
		add("w.started_by_member_id = ?", p.MemberID)
	}
	if p.State != "" {
		add("w.state = ?", string(p.State))
	}
	if p.Origin != "" {
		add("w.origin = ?", p.Origin)
	}
	if p.Attention {
		// core.Workspace.NeedsAttention; the approvals by approvals_pending.
		add(`(w.state = 'failed' OR w.last_turn_outcome = 'error' OR w.last_push = 'refused'
			OR EXISTS (SELECT 1 FROM approvals a WHERE a.workspace_id = w.id AND a.status = 'pending'))`)
	}
	if p.BeforeID != "" {
		add("(w.created_at, w.id) < (?, ?)", p.BeforeAt, p.BeforeID)
	}
	args = append(args, p.Limit)
	return q.queryWorkspaces(ctx, `WHERE `+strings.Join(where, " AND ")+`
		ORDER BY w.created_at DESC, w.id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
}

// AwaitingApproval uses approvals_pending: one query for a page of workspaces.
func (q queries) AwaitingApproval(ctx context.Context, ids []string) (_ []string, err error) {
	defer wrapErr(&err, "workspaces awaiting approval")
	out := []string{}
	if len(ids) == 0 {
		return out, nil
	}
	err = q.selectAll(ctx, &out, `SELECT DISTINCT workspace_id FROM approvals WHERE workspace_id = ANY($1) AND status = 'pending'`, pq.Array(ids))
	return out, err
}

// WorkspacesByID uses the primary key; the account is checked on each row.
func (q queries) WorkspacesByID(ctx context.Context, accountID string, ids []string) (_ []*core.Workspace, err error) {
	defer wrapErr(&err, "workspaces by id")
	return q.queryWorkspaces(ctx, `WHERE w.id = ANY($1) AND w.account_id = $2`, pq.Array(ids), accountID)
}

// SetWorkspaceTitle is a workspace's first title only: one already set is kept.
func (q queries) SetWorkspaceTitle(ctx context.Context, id string, sealed []byte) (err error) {
	defer wrapErr(&err, "set workspace title")
	_, err = q.exec(ctx, `UPDATE workspaces SET title_sealed = $2 WHERE id = $1 AND title_sealed IS NULL`, id, sealed)
	return err
}

// WorkspaceUsingBranch uses workspaces_project_branch_live.
func (q queries) WorkspaceUsingBranch(ctx context.Context, projectID, branch string) (_ string, err error) {
	defer wrapErr(&err, "workspace using branch")
	var id string
	err = q.get(ctx, &id, `SELECT id FROM workspaces WHERE project_id = $1 AND branch = $2 AND state <> 'deleted'`, projectID, branch)
	return id, err
}

// newestWorkspaceWhere uses workspaces_account_newest (a backward scan of one row):
// deleted workspaces still count as "the most recent workspace" for agent and model
// defaults, so the live-only workspaces_account_live cannot serve it.
const newestWorkspaceWhere = `WHERE w.account_id = $1 ORDER BY w.created_at DESC, w.id DESC LIMIT 1`

// NewestWorkspace is the account's newest workspace, deleted ones included.
func (q queries) NewestWorkspace(ctx context.Context, accountID string) (_ *core.Workspace, err error) {
	defer wrapErr(&err, "newest workspace")
	return q.getWorkspace(ctx, newestWorkspaceWhere, accountID)
}

func (q queries) SetWorkspaceState(ctx context.Context, id string, from core.WorkspaceState, to core.StateChange) (_ bool, err error) {
	defer wrapErr(&err, "set workspace state")
	n, err := q.exec(ctx, `UPDATE workspaces SET state = $3, status_code = $4, startup_phase = $5, runtime_state = $6,
		checkout_path = COALESCE(NULLIF($8, ''), checkout_path), status_detail = $9, state_changed_at = $7, updated_at = $7
		WHERE id = $1 AND state = $2`,
		id, from, to.State, to.StatusCode, to.StartupPhase, to.RuntimeState, to.At, to.CheckoutPath, to.StatusDetail)
	return n == 1, err
}

func (q queries) NextSeq(ctx context.Context, workspaceID string, at time.Time) (_ int64, err error) {
	defer wrapErr(&err, "next seq")
	var seq int64
	err = q.get(ctx, &seq, `UPDATE workspaces SET latest_seq = latest_seq + 1, updated_at = $2, last_activity_at = $2 WHERE id = $1
		RETURNING latest_seq`, workspaceID, at)
	return seq, err
}
