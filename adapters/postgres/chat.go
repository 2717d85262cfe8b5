package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// nonNil stores an empty array rather than NULL (the columns are NOT NULL).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (q queries) UpsertChatBinding(ctx context.Context, b *core.ChatBinding) (err error) {
	defer wrapErr(&err, "upsert chat binding")
	_, err = q.exec(ctx, `INSERT INTO chat_bindings (platform, team_id, account_id, project_id, agent, model, roles, channels,
			runtime_mode, provider_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $10, $11, $9, $9)
		ON CONFLICT (platform, team_id) DO UPDATE SET account_id = $3, project_id = $4, agent = $5, model = $6,
			roles = $7, channels = $8, runtime_mode = $10, provider_id = $11, updated_at = $9`,
		b.Platform, b.TeamID, b.AccountID, nullString(b.ProjectID), b.Agent, b.Model,
		pq.StringArray(nonNil(b.Roles)), pq.StringArray(nonNil(b.Channels)), b.UpdatedAt, b.RuntimeMode, b.ProviderID)
	return err
}

type chatBindingRow struct {
	Platform  string         `db:"platform"`
	TeamID    string         `db:"team_id"`
	AccountID string         `db:"account_id"`
	ProjectID sql.NullString `db:"project_id"`
	Agent     string         `db:"agent"`
	Model     string         `db:"model"`
	Roles     pq.StringArray `db:"roles"`
	Channels  pq.StringArray `db:"channels"`
	Mode      string         `db:"runtime_mode"`
	Provider  string         `db:"provider_id"`
	CreatedAt time.Time      `db:"created_at"`
	UpdatedAt time.Time      `db:"updated_at"`
}

// GetChatBinding uses the primary key.
func (q queries) GetChatBinding(ctx context.Context, platform, teamID string) (_ *core.ChatBinding, err error) {
	defer wrapErr(&err, "get chat binding")
	var r chatBindingRow
	if err := q.get(ctx, &r, `SELECT platform, team_id, account_id, project_id, agent, model, roles, channels, runtime_mode,
			provider_id, created_at, updated_at
		FROM chat_bindings WHERE platform = $1 AND team_id = $2`, platform, teamID); err != nil {
		return nil, err
	}
	return &core.ChatBinding{Platform: r.Platform, TeamID: r.TeamID, AccountID: r.AccountID, ProjectID: r.ProjectID.String,
		Agent: r.Agent, Model: r.Model, Roles: r.Roles, Channels: r.Channels, RuntimeMode: r.Mode, ProviderID: r.Provider, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}

func (q queries) SetChannelProject(ctx context.Context, p core.ChatPlace, projectID string, at time.Time) (err error) {
	defer wrapErr(&err, "set channel project")
	_, err = q.exec(ctx, `INSERT INTO chat_channels (platform, team_id, channel_id, project_id, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (platform, team_id, channel_id) DO UPDATE SET project_id = $4, updated_at = $5`,
		p.Platform, p.TeamID, p.ChannelID, projectID, at)
	return err
}

// ChannelProject uses the primary key.
func (q queries) ChannelProject(ctx context.Context, p core.ChatPlace) (_ string, err error) {
	defer wrapErr(&err, "channel project")
	var id string
	err = q.get(ctx, &id, `SELECT project_id FROM chat_channels WHERE platform = $1 AND team_id = $2 AND channel_id = $3`,
		p.Platform, p.TeamID, p.ChannelID)
	return id, err
}

func (q queries) InsertChatThread(ctx context.Context, t *core.ChatThread) (_ bool, err error) {
	defer wrapErr(&err, "insert chat thread")
	err = q.get(ctx, &t.ID, `INSERT INTO chat_threads (platform, team_id, channel_id, thread_id, workspace_id, follow_all, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (platform, team_id, channel_id, thread_id) DO NOTHING RETURNING id`,
		t.Place.Platform, t.Place.TeamID, t.Place.ChannelID, t.Place.ThreadID, t.WorkspaceID, t.FollowAll, t.CreatedAt)
	if errors.Is(err, core.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

func (r *chatThreadRow) thread() *core.ChatThread {
	return &core.ChatThread{ID: r.ID, Place: core.ChatPlace{Platform: r.Platform, TeamID: r.TeamID, ChannelID: r.ChannelID,
		ThreadID: r.ThreadID}, WorkspaceID: r.WorkspaceID, FollowAll: r.FollowAll, CreatedAt: r.CreatedAt}
}

type chatThreadRow struct {
	ID          int64     `db:"id"`
	Platform    string    `db:"platform"`
	TeamID      string    `db:"team_id"`
	ChannelID   string    `db:"channel_id"`
	ThreadID    string    `db:"thread_id"`
	WorkspaceID string    `db:"workspace_id"`
	FollowAll   bool      `db:"follow_all"`
	CreatedAt   time.Time `db:"created_at"`
}

// GetChatThread uses the (platform, team, channel, thread) unique index.
func (q queries) GetChatThread(ctx context.Context, p core.ChatPlace) (_ *core.ChatThread, err error) {
	defer wrapErr(&err, "get chat thread")
	var r chatThreadRow
	if err := q.get(ctx, &r, `SELECT id, platform, team_id, channel_id, thread_id, workspace_id, follow_all, created_at
		FROM chat_threads WHERE platform = $1 AND team_id = $2 AND channel_id = $3 AND thread_id = $4`,
		p.Platform, p.TeamID, p.ChannelID, p.ThreadID); err != nil {
		return nil, err
	}
	return r.thread(), nil
}

// GetChatThreadByThread uses chat_threads_thread.
func (q queries) GetChatThreadByThread(ctx context.Context, platform, teamID, threadID string) (_ *core.ChatThread, err error) {
	defer wrapErr(&err, "get chat thread by thread")
	var r chatThreadRow
	if err := q.get(ctx, &r, `SELECT id, platform, team_id, channel_id, thread_id, workspace_id, follow_all, created_at
		FROM chat_threads WHERE platform = $1 AND team_id = $2 AND thread_id = $3 ORDER BY id LIMIT 1`,
		platform, teamID, threadID); err != nil {
		return nil, err
	}
	return r.thread(), nil
}

func (q queries) SetThreadFollow(ctx context.Context, id int64, all bool) (err error) {
	defer wrapErr(&err, "set thread follow")
	_, err = q.exec(ctx, `UPDATE chat_threads SET follow_all = $2 WHERE id = $1`, id, all)
	return err
}

// CountPendingMessages uses messages_open.
func (q queries) CountPendingMessages(ctx context.Context, workspaceID string) (_ int, err error) {
	defer wrapErr(&err, "count pending messages")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM messages WHERE workspace_id = $1 AND role = 'user' AND status = 'pending'`, workspaceID)
	return n, err
}

func (q queries) InsertChatEvent(ctx context.Context, e *core.ChatEvent) (_ bool, err error) {
	defer wrapErr(&err, "insert chat event")
	n, err := q.exec(ctx, `INSERT INTO chat_inbox (platform, event_id, thread_key, payload_sealed, status, next_attempt_at, received_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $6) ON CONFLICT DO NOTHING`,
		e.Platform, e.EventID, e.ThreadKey, e.Payload, e.NextAt, e.At)
	return n == 1, err
}

type chatEventRow struct {
	Lease     string    `db:"lease_token"`
	Platform  string    `db:"platform"`
	EventID   string    `db:"event_id"`
	ThreadKey string    `db:"thread_key"`
	Payload   []byte    `db:"payload_sealed"`
	Attempts  int       `db:"attempts"`
	At        time.Time `db:"received_at"`
}

// chatEventQueue is the inbox; its claim uses chat_inbox_due and chat_inbox_thread: an
// event waits while an older event of its thread is pending (leased or not), so a
// thread is handled in order.
var chatEventQueue = leasedTable{
	table: "chat_inbox", alias: "e", key: []string{"platform", "event_id"},
	due: `e.status = 'pending' AND e.next_attempt_at <= $4
		  AND NOT EXISTS (SELECT 1 FROM chat_inbox o WHERE o.status = 'pending' AND o.thread_key = e.thread_key
		                  AND (o.received_at, o.event_id) < (e.received_at, e.event_id))`,
	order:     "e.next_attempt_at",
	returning: "e.lease_token, e.platform, e.event_id, e.thread_key, e.payload_sealed, e.attempts, e.received_at",
}

// ClaimChatEvents claims from chatEventQueue; due is the hub's clock (now).
func (q queries) ClaimChatEvents(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) (_ []*core.ChatEvent, err error) {
	defer wrapErr(&err, "claim chat events")
	var rows []chatEventRow
	if err := chatEventQueue.claim(ctx, q, &rows, token, leaseFor, limit, now); err != nil {
		return nil, err
	}
	out := make([]*core.ChatEvent, len(rows))
	for i, r := range rows {
		out[i] = &core.ChatEvent{Platform: r.Platform, EventID: r.EventID, ThreadKey: r.ThreadKey, Payload: r.Payload,
			Status: "pending", Attempts: r.Attempts, At: r.At, Lease: r.Lease}
	}
	return out, nil
}

// SettleChatEvent is fenced by the lease token.
func (q queries) SettleChatEvent(ctx context.Context, e *core.ChatEvent, token string) (_ bool, err error) {
	defer wrapErr(&err, "settle chat event")
	return chatEventQueue.settle(ctx, q, []any{e.Platform, e.EventID}, token,
		set{col: "status", val: e.Status}, set{col: "attempts", val: e.Attempts},
		set{col: "next_attempt_at", val: nullTime(nonZero(e.NextAt)), keep: true}, set{col: "last_error", val: e.LastError})
}

// InsertChatDeliveries uses chat_threads_workspace.
func (q queries) InsertChatDeliveries(ctx context.Context, workspaceID, messageID string, seq int64, truncated bool, at time.Time) (_ int64, err error) {
	defer wrapErr(&err, "insert chat deliveries")
	return q.exec(ctx, `INSERT INTO chat_deliveries (thread_id, message_id, seq, truncated, status, next_attempt_at, created_at)
		SELECT id, $2, $3, $4, 'pending', $5, $5 FROM chat_threads WHERE workspace_id = $1`,
		workspaceID, messageID, seq, truncated, at)
}

type chatReplyRow struct {
	Lease         string         `db:"lease_token"`
	ThreadID      int64          `db:"thread_id"`
	MessageID     string         `db:"message_id"`
	TurnID        sql.NullString `db:"turn_id"`
	Platform      string         `db:"platform"`
	TeamID        string         `db:"team_id"`
	ChannelID     string         `db:"channel_id"`
	Thread        string         `db:"thread"`
	WorkspaceID   string         `db:"workspace_id"`
	Truncated     bool           `db:"truncated"`
	Outcome       sql.NullString `db:"outcome"`
	TextSealed    []byte         `db:"text_sealed"`
	FailureCode   sql.NullString `db:"failure_code"`
	FailureAgent  sql.NullString `db:"failure_agent"`
	FailureSealed []byte         `db:"failure_sealed"`
	PartsPosted   int            `db:"parts_posted"`
	Attempts      int            `db:"attempts"`
	CreatedAt     time.Time      `db:"created_at"`
}

// chatReplyQueue is the replies outbox; its claim uses chat_deliveries_due and
// chat_deliveries_thread: a reply waits while an earlier reply of its thread is
// pending, so a thread reads in order.
var chatReplyQueue = leasedTable{
	table: "chat_deliveries", alias: "d", key: []string{"thread_id", "message_id"},
	due: `d.status = 'pending' AND d.next_attempt_at <= $4
		  AND NOT EXISTS (SELECT 1 FROM chat_deliveries o WHERE o.status = 'pending' AND o.thread_id = d.thread_id AND o.seq < d.seq)`,
	order: "d.next_attempt_at",
	from:  "chat_threads t, messages m", join: "t.id = d.thread_id AND m.id = d.message_id",
	returning: `d.lease_token, d.thread_id, d.message_id, t.platform, t.team_id, t.channel_id, t.thread_id AS thread, t.workspace_id,
		d.truncated, m.turn_id, m.outcome, m.text_sealed, m.failure_code, m.failure_agent, m.failure_sealed, d.parts_posted, d.attempts, d.created_at`,
}

// ClaimChatDeliveries claims from chatReplyQueue; due is the hub's clock (now).
func (q queries) ClaimChatDeliveries(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) (_ []*core.ClaimedChatReply, err error) {
	defer wrapErr(&err, "claim chat deliveries")
	var rows []chatReplyRow
	if err := chatReplyQueue.claim(ctx, q, &rows, token, leaseFor, limit, now); err != nil {
		return nil, err
	}
	out := make([]*core.ClaimedChatReply, len(rows))
	for i, r := range rows {
		out[i] = &core.ClaimedChatReply{
			ThreadID: r.ThreadID, MessageID: r.MessageID, TurnID: r.TurnID.String, WorkspaceID: r.WorkspaceID,
			Place:     core.ChatPlace{Platform: r.Platform, TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadID: r.Thread},
			Truncated: r.Truncated, Outcome: core.Outcome(r.Outcome.String), SealedText: r.TextSealed, FailureCode: r.FailureCode.String,
			FailureAgent: r.FailureAgent.String, SealedFailure: r.FailureSealed,
			ChatPostState: core.ChatPostState{PartsPosted: r.PartsPosted, Attempts: r.Attempts, CreatedAt: r.CreatedAt, Lease: r.Lease},
		}
	}
	return out, nil
}

// SettleChatDelivery is fenced by the lease token.
func (q queries) SettleChatDelivery(ctx context.Context, r *core.ClaimedChatReply, token string) (_ bool, err error) {
	defer wrapErr(&err, "settle chat delivery")
	return chatReplyQueue.settle(ctx, q, []any{r.ThreadID, r.MessageID}, token, postSettlement(r.ChatPostState)...)
}

// postSettlement is what posting left on a reply or notice.
func postSettlement(p core.ChatPostState) []set {
	return []set{{col: "status", val: p.Status}, {col: "parts_posted", val: p.PartsPosted}, {col: "attempts", val: p.Attempts},
		{col: "next_attempt_at", val: nullTime(nonZero(p.NextAt)), keep: true}, {col: "last_error", val: p.LastError}}
}

func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
