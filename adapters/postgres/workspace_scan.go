package postgres

import (
	"context"

	"github.com/wshub/wshub/core"
)

// dest lists r's fields in workspaceSelect's column order, for rows.Scan: a workspace
// is read on nearly every request (GET, send, the list), and sqlx's per-row reflection
// cost more than the row's own decoding. TestWorkspaceScanMatchesItsSelect holds the
// order to the SELECT by the fields' db tags.
func (r *workspaceRow) dest() []any {
	return []any{&r.ID, &r.AccountID, &r.ProjectID, &r.ProviderID, &r.Agent, &r.Model, &r.RuntimeMode,
		&r.Branch, &r.BaseRef, &r.Origin, &r.State, &r.StatusCode, &r.StatusDetail, &r.HeadCommit, &r.LastPush,
		&r.StartupPhase, &r.RuntimeState, &r.LatestSeq,
		&r.EventSeq, &r.LastTurnID, &r.LastTurnOutcome, &r.LastTurnCompletedAt, &r.LastTurnFailure, &r.TitleSealed, &r.CreatedAt, &r.UpdatedAt,
		&r.AgentSession, &r.CheckoutPath, &r.LeaseToken, &r.LastActivityAt, &r.StateChangedAt,
		&r.RuntimeStartedAt, &r.RuntimeStarts, &r.RuntimeSession, &r.RuntimeSeenAt,
		&r.StartedByKind, &r.StartedByID, &r.StartedByName, &r.StartedByMember, &r.StartedByURL, &r.Host,
		&r.PullNumber, &r.PullURL, &r.PullState, &r.PullError, &r.PullCheckedAt, &r.PullRequested,
		&r.OpenMessages}
}

// queryWorkspaces runs workspaceSelect+suffix and returns its rows as workspaces.
func (q queries) queryWorkspaces(ctx context.Context, suffix string, args ...any) ([]*core.Workspace, error) {
	return q.scanWorkspaces(ctx, workspaceSelect+suffix, args...)
}

// scanWorkspaces runs a statement that returns workspaceColumns and returns its rows
// as workspaces.
func (q queries) scanWorkspaces(ctx context.Context, query string, args ...any) ([]*core.Workspace, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	var r workspaceRow
	dest := r.dest()
	out := []*core.Workspace{} // empty, not nil: a list of none
	for rows.Next() {
		r = workspaceRow{}
		if err := rows.Scan(dest...); err != nil {
			return nil, mapErr(err)
		}
		out = append(out, r.core())
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	return out, nil
}
