package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// takeNextTurnSQL is a turn's start in one statement, so one round trip and no
// BEGIN/COMMIT: w locks the leased workspace (primary key, fenced by the lease token),
// with its recorded environment and whether it has chat threads
// (chat_threads_workspace); m is its oldest open user message (messages_open), looked
// for only when w is ready; d marks m delivered when it is pending. The row is the
// workspace and the message as read, the message's columns empty when there is none,
// then the workspace's project (its key: the workspace's foreign key holds it there)
// and the project's secrets in name order (project_secrets' key). The message's stop
// request is the one d returns when d updated it: a stop that committed while w waited
// for the workspace's lock is newer than the statement's snapshot, and the update
// reads the row's latest version.
//
// $1 the workspace, $2 its lease token, $3 the delivery time.
var takeNextTurnSQL = `WITH w AS (
		SELECT ` + workspaceColumns + `, w.environment,
			EXISTS (SELECT 1 FROM chat_threads t WHERE t.workspace_id = w.id) AS chat_threads
		FROM workspaces w WHERE w.id = $1 AND w.lease_token = $2 FOR UPDATE OF w),
	m AS (
		SELECT ` + messageColumns + ` FROM messages
		WHERE workspace_id = $1 AND role = 'user' AND status IN ('pending', 'delivered') AND (SELECT state FROM w) = 'ready'
		ORDER BY seq LIMIT 1),
	d AS (
		UPDATE messages SET status = 'delivered', delivered_at = $3 FROM m
		WHERE messages.id = m.id AND messages.status = 'pending'
		RETURNING messages.stop_requested_at)
	SELECT w.*, COALESCE(m.id, ''), COALESCE(m.workspace_id, ''), COALESCE(m.seq, 0), COALESCE(m.role, ''), m.text_sealed,
		m.status, COALESCE(m.turn_id, ''), m.outcome, m.asset_ids, m.failure_code, m.failure_agent, m.failure_sealed,
		COALESCE(m.created_at, 'epoch'), m.delivered_at, COALESCE((SELECT stop_requested_at FROM d), m.stop_requested_at),
		m.author_kind, m.author_id, m.author_name, m.author_member_id, m.author_url,
		` + qualified(projectColumns, "p") + `, s.names, s.sealed, s.agent
	FROM w JOIN projects p ON p.id = w.project_id LEFT JOIN m ON true
	LEFT JOIN LATERAL (SELECT array_agg(name ORDER BY name) AS names, array_agg(value_sealed ORDER BY name) AS sealed,
		array_agg(agent ORDER BY name) AS agent FROM project_secrets WHERE project_id = p.id) s ON true`

// TakeNextTurn: see core.RuntimeQueries.
func (q queries) TakeNextTurn(ctx context.Context, id, token string, at time.Time) (_ *core.NextTurn, err error) {
	defer wrapErr(&err, "take next turn")
	var ws workspaceRow
	var msg core.StoredMessage
	var p projectRow
	var names pq.StringArray
	var sealed pq.ByteaArray
	var agent pq.BoolArray
	next := &core.NextTurn{}
	row := q.queryRow(ctx, takeNextTurnSQL, id, token, at)
	err = newMessageScan().scan(scanFunc(func(dest ...any) error {
		dest = append(append(ws.dest(), &next.Environment, &next.ChatThreads), dest...)
		return row.Scan(append(append(dest, p.dest()...), &names, &sealed, &agent)...)
	}), &msg)
	if err != nil {
		return nil, mapErr(err)
	}
	next.Workspace, next.Project = ws.core(), p.core()
	if msg.ID != "" {
		next.Message = &msg
	}
	for i := range names {
		next.Secrets = append(next.Secrets, &core.ProjectSecret{ProjectID: p.ID, Name: names[i], SealedValue: sealed[i], Agent: agent[i]})
	}
	return next, nil
}

// scanFunc is a row's Scan made of a function: a row of two scans' columns, one after
// the other.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }
