package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// workspaceQueue leases workspaces with work, fairly between accounts (fair_claim.go):
// the candidates are ranked in the CTE cand, and the due CTE locks the best of them,
// checking again on each locked row that its state still has work and that this host
// may step it. $4 is the hub's default quota of running turns, $5 the claiming hub's
// host, recorded on a local workspace no host held.
var workspaceQueue = leasedTable{
	table: "workspaces", alias: "w", key: []string{"id"},
	with:    fairCandidates("$4", "$5"),
	dueFrom: ", cand c",
	// The candidates' ids steer the lock's read of workspaces to its primary key: joined
	// alone, a planner that expects many candidates (statistics of a queue that has
	// just emptied) reads the whole table on every claim.
	due: `w.id = c.id AND w.id = ANY (ARRAY(SELECT id FROM cand)) AND (c.state <> 'ready' OR c.turns <= c.max_turns)
		  AND ` + stateHasWork("w") + ` AND ` + servedBy("w", "$5"),
	order: fairOrder,
	set:   claimedHost("w", "$5"),
	// The claimed rows whole, as the claim left them (its lease token, its host): a
	// worker starts on them without reading them again.
	returning: workspaceColumns,
}

// ClaimWorkspaces leases workspaces with work (workspaceQueue) and returns them whole,
// lifecycle steps first, then the oldest update. An expired lease is claimable again,
// which is how a dead worker's workspace is recovered.
func (q queries) ClaimWorkspaces(ctx context.Context, token string, leaseFor time.Duration, limit, maxRunningTurns int, host string) (_ []*core.Workspace, err error) {
	defer wrapErr(&err, "claim workspaces")
	claimed, err := q.scanWorkspaces(ctx, workspaceQueue.claimSQL(), workspaceQueue.claimArgs(token, leaseFor, limit, maxRunningTurns, host)...)
	if err != nil {
		return nil, err
	}
	// An UPDATE's RETURNING has no order of its own.
	slices.SortStableFunc(claimed, func(a, b *core.Workspace) int {
		if aReady, bReady := a.State == core.StateReady, b.State == core.StateReady; aReady != bReady {
			if aReady {
				return 1
			}
			return -1
		}
		return a.UpdatedAt.Compare(b.UpdatedAt)
	})
	return claimed, nil
}

// RenewLease uses the primary key; the expiry is the database's clock plus leaseFor.
func (q queries) RenewLease(ctx context.Context, id, token string, leaseFor time.Duration) (_ core.WorkspaceState, _ bool, err error) {
	defer wrapErr(&err, "renew lease")
	var state core.WorkspaceState
	err = workspaceQueue.renew(ctx, q, &state, "state", []any{id}, token, leaseFor)
	if errors.Is(err, core.ErrNoRows) {
		return "", false, nil
	}
	return state, err == nil, err
}

func (q queries) ReleaseLease(ctx context.Context, id, token string) (err error) {
	defer wrapErr(&err, "release lease")
	return workspaceQueue.release(ctx, q, []any{id}, token)
}

func (q queries) LockLeasedWorkspace(ctx context.Context, id, token string) (_ *core.Workspace, err error) {
	defer wrapErr(&err, "lock leased workspace")
	return q.getWorkspace(ctx, `WHERE w.id = $1 AND w.lease_token = $2 FOR UPDATE OF w`, id, token)
}

func (q queries) GetWorkspaceByID(ctx context.Context, id string) (_ *core.Workspace, err error) {
	defer wrapErr(&err, "get workspace by ID")
	return q.getWorkspace(ctx, `WHERE w.id = $1`, id)
}

// RecordLastTurn reads the open-message flag in the same statement (messages_open).
func (q queries) RecordLastTurn(ctx context.Context, w *core.Workspace) (err error) {
	defer wrapErr(&err, "record last turn")
	return mapErr(q.queryRow(ctx, `UPDATE workspaces SET last_turn_id = $2, last_turn_outcome = $3, last_turn_completed_at = $4,
		agent_session = $5, last_activity_at = $6, updated_at = $7, head_commit = $8, last_push = $9,
		pull_number = $10, pull_url = $11, pull_state = $12, pull_error = $13, pull_checked_at = $14,
		last_turn_failure = $15 WHERE id = $1
		RETURNING EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = $1 AND m.role = 'user'
		        AND m.status IN ('pending', 'delivered'))`,
		w.ID, w.LastTurnID, w.LastTurnOutcome, nullTime(w.LastTurnCompletedAt), w.AgentSession, w.LastActivityAt, w.UpdatedAt,
		w.HeadCommit, w.LastPush, w.Pull.Number, w.Pull.URL, w.Pull.State, w.Pull.Error, nullTime(w.Pull.CheckedAt),
		w.LastTurnFailure).Scan(&w.OpenMessages))
}

// OldestOpenMessage uses messages_open.
func (q queries) OldestOpenMessage(ctx context.Context, workspaceID string) (_ *core.StoredMessage, err error) {
	defer wrapErr(&err, "oldest open message")
	return q.oneMessage(ctx, `WHERE workspace_id = $1 AND role = 'user' AND status IN ('pending', 'delivered')
		ORDER BY seq LIMIT 1`, workspaceID)
}

func (q queries) MarkDelivered(ctx context.Context, messageID string, at time.Time) (_ bool, err error) {
	defer wrapErr(&err, "mark delivered")
	n, err := q.exec(ctx, `UPDATE messages SET status = 'delivered', delivered_at = $2 WHERE id = $1 AND status = 'pending'`, messageID, at)
	return n == 1, err
}

func (q queries) SettleMessage(ctx context.Context, messageID string) (_ bool, err error) {
	defer wrapErr(&err, "settle message")
	n, err := q.exec(ctx, `UPDATE messages SET status = 'settled' WHERE id = $1 AND status = 'delivered'`, messageID)
	return n == 1, err
}

func (q queries) InsertAssistantMessage(ctx context.Context, m *core.Message, sealedText []byte, f *core.TurnFailure, sealedFailure []byte) (err error) {
	defer wrapErr(&err, "insert assistant message")
	var code, agent string
	if f != nil {
		code, agent = f.Code, f.Agent
	}
	_, err = q.exec(ctx, `INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome,
		failure_code, failure_agent, failure_sealed, created_at) VALUES ($1, $2, $3, 'assistant', $4, 'settled', $5, $6, $7, $8, $9, $10)`,
		m.ID, m.WorkspaceID, m.Seq, sealedText, m.TurnID, m.Outcome, nullString(code), nullString(agent), sealedFailure, m.CreatedAt)
	return err
}

// IdleReadyWorkspaces uses workspaces_lifecycle; a workspace with an open message is
// never idle.
func (q queries) IdleReadyWorkspaces(ctx context.Context, idleSince time.Time, limit int) (_ []string, err error) {
	defer wrapErr(&err, "idle ready workspaces")
	var ids []string
	err = q.selectAll(ctx, &ids, `SELECT w.id FROM workspaces w WHERE w.state = 'ready' AND w.last_activity_at < $1
		AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = w.id AND m.role = 'user'
		                AND m.status IN ('pending', 'delivered'))
		ORDER BY w.last_activity_at LIMIT $2`, idleSince, limit)
	return ids, err
}

// WorkspacesInStateSince uses workspaces_lifecycle.
func (q queries) WorkspacesInStateSince(ctx context.Context, state core.WorkspaceState, since time.Time, limit int) (_ []string, err error) {
	defer wrapErr(&err, "workspaces in state since")
	var ids []string
	err = q.selectAll(ctx, &ids, `SELECT id FROM workspaces WHERE state = $1 AND state_changed_at < $2
		ORDER BY state_changed_at LIMIT $3`, state, since, limit)
	return ids, err
}

// ExpirePendingMessages uses messages_pending_age.
func (q queries) ExpirePendingMessages(ctx context.Context, before time.Time) (_ int64, err error) {
	defer wrapErr(&err, "expire pending messages")
	return q.exec(ctx, `UPDATE messages SET status = 'expired' WHERE status = 'pending' AND created_at < $1`, before)
}

// FailStrandedMessages uses messages_open.
func (q queries) FailStrandedMessages(ctx context.Context) (_ int64, err error) {
	defer wrapErr(&err, "fail stranded messages")
	return q.exec(ctx, `UPDATE messages m SET status = 'failed' FROM workspaces w
		WHERE m.workspace_id = w.id AND m.role = 'user' AND m.status = 'delivered' AND w.state IN ('failed', 'deleted')`)
}

// FailOpenMessages fails a workspace's pending and delivered user messages (its setup
// failed: no turn will ever take them); uses messages_open.
func (q queries) FailOpenMessages(ctx context.Context, workspaceID string) (_ int64, err error) {
	defer wrapErr(&err, "fail open messages")
	return q.exec(ctx, `UPDATE messages SET status = 'failed'
		WHERE workspace_id = $1 AND role = 'user' AND status IN ('pending', 'delivered')`, workspaceID)
}

// ClaimCronTick: the advisory lock keeps two replicas from running a job at once; the
// (job, tick) row keeps a tick from running twice.
func (q queries) ClaimCronTick(ctx context.Context, job string, tick, now time.Time) (_ bool, err error) {
	defer wrapErr(&err, "claim cron tick")
	var locked bool
	if err := q.get(ctx, &locked, `SELECT pg_try_advisory_xact_lock(hashtext('wshub.cron.' || $1))`, job); err != nil || !locked {
		return false, err
	}
	n, err := q.exec(ctx, `INSERT INTO cron_runs (job, tick, started_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, job, tick, now)
	return n == 1, err
}

// Notify sends a notification. In a transaction, PostgreSQL delivers it when the
// transaction commits, so the transaction's notifications are kept until then and sent
// in one statement (notifications.send): a recorded turn wakes three channels, each a
// round trip of its own otherwise.
func (q queries) Notify(ctx context.Context, channel, payload string) (err error) {
	if q.notes != nil {
		q.notes.add(channel, payload)
		return nil
	}
	defer wrapErr(&err, "notify")
	_, err = q.exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return err
}

// notifications are a transaction's, in the order they were made; one made twice
// (channel and payload) is kept once, as PostgreSQL delivers it once.
type notifications struct {
	channels, payloads []string
}

func (n *notifications) add(channel, payload string) {
	for i := range n.channels {
		if n.channels[i] == channel && n.payloads[i] == payload {
			return
		}
	}
	n.channels, n.payloads = append(n.channels, channel), append(n.payloads, payload)
}

// send sends the notifications on tx, just before it commits, in their order.
func (n *notifications) send(ctx context.Context, tx sqlx.ExtContext) (err error) {
	switch len(n.channels) {
	case 0:
		return nil
	case 1:
		_, err = tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, n.channels[0], n.payloads[0])
	default:
		_, err = tx.ExecContext(ctx, `SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS n(c, p, i) ORDER BY i`,
			pq.Array(n.channels), pq.Array(n.payloads))
	}
	if err != nil {
		return fmt.Errorf("notify: %w", mapErr(err))
	}
	return nil
}

func (q queries) StartRuntime(ctx context.Context, id string, tokenHash []byte, at time.Time) (err error) {
	defer wrapErr(&err, "start runtime")
	_, err = q.exec(ctx, `UPDATE workspaces SET runtime_token_hash = $2, runtime_started_at = $3,
		runtime_starts = runtime_starts + 1, runtime_session = '', runtime_seen_at = NULL, runtime_state = 'connecting'
		WHERE id = $1`, id, tokenHash, at)
	return err
}

func (q queries) RevokeRuntime(ctx context.Context, id string) (err error) {
	defer wrapErr(&err, "revoke runtime")
	_, err = q.exec(ctx, `UPDATE workspaces SET runtime_token_hash = NULL, runtime_started_at = NULL, runtime_session = '',
		runtime_seen_at = NULL WHERE id = $1 AND runtime_token_hash IS NOT NULL`, id)
	return err
}

// LockWorkspaceByRuntimeToken uses workspaces_runtime_token.
func (q queries) LockWorkspaceByRuntimeToken(ctx context.Context, hash []byte) (_ *core.Workspace, err error) {
	defer wrapErr(&err, "lock workspace by runtime token")
	return q.getWorkspace(ctx, `WHERE w.runtime_token_hash = $1 FOR UPDATE OF w`, hash)
}

func (q queries) TouchRuntime(ctx context.Context, id, session string, at time.Time, hello bool) (err error) {
	defer wrapErr(&err, "touch runtime")
	_, err = q.exec(ctx, `UPDATE workspaces SET runtime_session = $2, runtime_seen_at = $3,
		runtime_starts = CASE WHEN $4 THEN 0 ELSE runtime_starts END,
		runtime_state = CASE WHEN state = 'ready' THEN 'online' ELSE 'connecting' END
		WHERE id = $1`, id, session, at, hello)
	return err
}

// RevokeSilentRuntimes reads workspaces_runtime_seen (started runtimes by last call).
func (q queries) RevokeSilentRuntimes(ctx context.Context, seenBefore, startedBefore time.Time, limit int) (_ []string, err error) {
	defer wrapErr(&err, "revoke silent runtimes")
	var ids []string
	err = q.selectAll(ctx, &ids, `UPDATE workspaces SET runtime_token_hash = NULL, runtime_started_at = NULL,
		runtime_session = '', runtime_seen_at = NULL, runtime_state = 'offline'
		WHERE id IN (SELECT id FROM workspaces
		             WHERE runtime_started_at IS NOT NULL
		               AND (runtime_seen_at < $1 OR runtime_seen_at IS NULL AND runtime_started_at < $2)
		             ORDER BY runtime_seen_at NULLS FIRST LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id`, seenBefore, startedBefore, limit)
	return ids, err
}
