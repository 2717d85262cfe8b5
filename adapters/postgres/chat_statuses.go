package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

// ChatThreadsOf uses chat_threads_workspace.
func (q queries) ChatThreadsOf(ctx context.Context, workspaceID string) (_ []*core.ChatThread, err error) {
	defer wrapErr(&err, "chat threads of")
	var rows []chatThreadRow
	if err := q.selectAll(ctx, &rows, `SELECT id, platform, team_id, channel_id, thread_id, workspace_id, follow_all, created_at
		FROM chat_threads WHERE workspace_id = $1 ORDER BY id`, workspaceID); err != nil {
		return nil, err
	}
	out := make([]*core.ChatThread, len(rows))
	for i := range rows {
		out[i] = rows[i].thread()
	}
	return out, nil
}

// TouchChatStatuses inserts a row per thread of the workspace (chat_threads_workspace)
// or bumps the open ones: one statement either way.
func (q queries) TouchChatStatuses(ctx context.Context, workspaceID, turnID string, now, firstAt time.Time, finished bool) (_ int64, err error) {
	defer wrapErr(&err, "touch chat statuses")
	return q.exec(ctx, `INSERT INTO chat_statuses (chat_thread, turn_id, workspace_id, started_at, next_at, refresh_at, finished)
		SELECT id, $2, $1, $3, $4, $4, $5 FROM chat_threads WHERE workspace_id = $1
		ON CONFLICT (chat_thread, turn_id) DO UPDATE SET version = chat_statuses.version + 1,
			finished = chat_statuses.finished OR EXCLUDED.finished
		WHERE chat_statuses.status = 'open'`, workspaceID, turnID, now, firstAt, finished)
}

type chatStatusRow struct {
	Lease       string    `db:"lease_token"`
	ThreadID    int64     `db:"chat_thread"`
	TurnID      string    `db:"turn_id"`
	WorkspaceID string    `db:"workspace_id"`
	MessageRef  string    `db:"message_ref"`
	Version     int       `db:"version"`
	Shown       int       `db:"shown"`
	Finished    bool      `db:"finished"`
	StartedAt   time.Time `db:"started_at"`
	Attempts    int       `db:"attempts"`
	Platform    string    `db:"platform"`
	TeamID      string    `db:"team_id"`
	ChannelID   string    `db:"channel_id"`
	Thread      string    `db:"thread_id"`
}

// chatStatusQueue is the status messages' queue; its claim uses chat_statuses_due. A
// row is due when its next edit time has passed and it has something to show: a
// version not shown yet, or a running turn whose elapsed time is due a refresh.
var chatStatusQueue = leasedTable{
	table: "chat_statuses", alias: "s", key: []string{"chat_thread", "turn_id"},
	due: `s.status = 'open' AND s.next_at <= $4
		  AND (s.version > s.shown OR (NOT s.finished AND s.refresh_at <= $4))`,
	order: "s.next_at",
	from:  "chat_threads t", join: "t.id = s.chat_thread",
	returning: `s.lease_token, s.chat_thread, s.turn_id, s.workspace_id, s.message_ref, s.version, s.shown, s.finished,
		s.started_at, s.attempts, t.platform, t.team_id, t.channel_id, t.thread_id`,
}

// ClaimChatStatuses leases due status rows with their threads, in one statement.
func (q queries) ClaimChatStatuses(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) (_ []*core.ClaimedChatStatus, err error) {
	defer wrapErr(&err, "claim chat statuses")
	var rows []chatStatusRow
	if err := chatStatusQueue.claim(ctx, q, &rows, token, leaseFor, limit, now); err != nil {
		return nil, err
	}
	out := make([]*core.ClaimedChatStatus, len(rows))
	for i, r := range rows {
		out[i] = &core.ClaimedChatStatus{ThreadID: r.ThreadID, TurnID: r.TurnID, WorkspaceID: r.WorkspaceID,
			Place:      core.ChatPlace{Platform: r.Platform, TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadID: r.Thread},
			MessageRef: r.MessageRef, Version: r.Version, Shown: r.Shown, Finished: r.Finished, StartedAt: r.StartedAt,
			Attempts: r.Attempts, Lease: r.Lease}
	}
	return out, nil
}

// SettleChatStatus is fenced by the lease token.
func (q queries) SettleChatStatus(ctx context.Context, c *core.ClaimedChatStatus, token string) (_ bool, err error) {
	defer wrapErr(&err, "settle chat status")
	return chatStatusQueue.settle(ctx, q, []any{c.ThreadID, c.TurnID}, token,
		set{col: "status", val: c.Status}, set{col: "message_ref", val: c.MessageRef},
		set{col: "shown", val: c.Version}, set{col: "attempts", val: c.Attempts}, set{col: "last_error", val: c.LastError},
		set{col: "next_at", val: c.NextAt}, set{col: "refresh_at", val: c.RefreshAt})
}

// TurnEventTail reads turn_events_turn: the turn's last events and its tool steps.
func (q queries) TurnEventTail(ctx context.Context, workspaceID, turnID string, limit int) (_ []*core.StoredTurnEvent, steps int, err error) {
	defer wrapErr(&err, "turn event tail")
	var rows []turnEventRow
	if err := q.selectAll(ctx, &rows, `SELECT `+turnEventColumns+` FROM turn_events
		WHERE workspace_id = $1 AND turn_id = $2 ORDER BY seq DESC LIMIT $3`, workspaceID, turnID, limit); err != nil {
		return nil, 0, err
	}
	if err := q.get(ctx, &steps, `SELECT count(*) FROM turn_events WHERE workspace_id = $1 AND turn_id = $2 AND type = $3`,
		workspaceID, turnID, core.EventToolStarted); err != nil {
		return nil, 0, err
	}
	return storedEvents(rows), steps, nil
}
