package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// InsertChatNotices writes the notices with one statement (unnest of parallel arrays).
func (q queries) InsertChatNotices(ctx context.Context, ns []*core.QueuedChatNotice) (_ int64, err error) {
	defer wrapErr(&err, "insert chat notices")
	if len(ns) == 0 {
		return 0, nil
	}
	cols := make([][]string, 7)
	texts := make([][]byte, len(ns))
	ats := make([]time.Time, len(ns))
	threads := make([]int64, len(ns))
	for i, n := range ns {
		for c, v := range []string{n.Place.Platform, n.Place.TeamID, n.Place.ChannelID, n.Place.ThreadID, n.Key, n.Kind, n.RefersTo} {
			cols[c] = append(cols[c], v)
		}
		texts[i], ats[i], threads[i] = n.SealedText, n.At, n.AfterReplies
	}
	return q.exec(ctx, `INSERT INTO chat_notices (platform, team_id, channel_id, thread_id, notice_key, kind, text_sealed,
		refers_to, chat_thread, status, next_attempt_at, created_at)
	SELECT p, t, c, th, k, kd, tx, NULLIF(rf, ''), NULLIF(ct, 0), 'pending', at, at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::timestamptz[], $9::text[],
		$10::bigint[]) AS n(p, t, c, th, k, kd, tx, at, rf, ct)
	ON CONFLICT (platform, notice_key) DO NOTHING`,
		pq.Array(cols[0]), pq.Array(cols[1]), pq.Array(cols[2]), pq.Array(cols[3]), pq.Array(cols[4]), pq.Array(cols[5]),
		pq.Array(texts), pq.Array(ats), pq.Array(cols[6]), pq.Array(threads))
}

// InsertFailureNotices uses chat_threads_workspace.
func (q queries) InsertFailureNotices(ctx context.Context, workspaceID, code string, at time.Time) (_ int64, err error) {
	defer wrapErr(&err, "insert failure notices")
	return q.exec(ctx, `INSERT INTO chat_notices (platform, team_id, channel_id, thread_id, notice_key, kind, workspace_id,
		code, chat_thread, status, next_attempt_at, created_at)
	SELECT platform, team_id, channel_id, thread_id, 'failed:' || workspace_id || ':' || id, 'workspace_failed', workspace_id,
		$2, id, 'pending', $3, $3
	FROM chat_threads WHERE workspace_id = $1
	ON CONFLICT (platform, notice_key) DO NOTHING`, workspaceID, code, at)
}

type chatNoticeRow struct {
	Lease       string    `db:"lease_token"`
	ID          int64     `db:"id"`
	Key         string    `db:"notice_key"`
	Platform    string    `db:"platform"`
	TeamID      string    `db:"team_id"`
	ChannelID   string    `db:"channel_id"`
	ThreadID    string    `db:"thread_id"`
	Kind        string    `db:"kind"`
	TextSealed  []byte    `db:"text_sealed"`
	WorkspaceID string    `db:"workspace_id"`
	Code        string    `db:"code"`
	PartsPosted int       `db:"parts_posted"`
	Attempts    int       `db:"attempts"`
	CreatedAt   time.Time `db:"created_at"`
	// The notice this one refers to (approval_decided: the approval's message).
	RefersTo     sql.NullString `db:"refers_to"`
	RefersRef    sql.NullString `db:"refers_ref"`
	RefersSealed []byte         `db:"refers_sealed"`
}

// chatNoticeQueue is the notices outbox; its claim uses chat_notices_due,
// chat_notices_thread and chat_deliveries_thread: a notice waits while an earlier
// notice of its thread is pending, and a failure notice while its thread still has a
// reply to post.
var chatNoticeQueue = leasedTable{
	table: "chat_notices", alias: "n", key: []string{"id"},
	due: `n.status = 'pending' AND n.next_attempt_at <= $4
		  AND NOT EXISTS (SELECT 1 FROM chat_notices o WHERE o.status = 'pending' AND o.platform = n.platform
		                  AND o.team_id = n.team_id AND o.channel_id = n.channel_id AND o.thread_id = n.thread_id AND o.id < n.id)
		  AND (n.chat_thread IS NULL OR NOT EXISTS (
		       SELECT 1 FROM chat_deliveries d WHERE d.status = 'pending' AND d.thread_id = n.chat_thread))`,
	order: "n.next_attempt_at",
	returning: `n.lease_token, n.id, n.notice_key, n.platform, n.team_id, n.channel_id, n.thread_id, n.kind, n.text_sealed,
		n.workspace_id, n.code, n.parts_posted, n.attempts, n.created_at, n.refers_to,
		(SELECT o.message_ref FROM chat_notices o WHERE o.platform = n.platform AND o.notice_key = n.refers_to) AS refers_ref,
		(SELECT o.text_sealed FROM chat_notices o WHERE o.platform = n.platform AND o.notice_key = n.refers_to) AS refers_sealed`,
}

// ClaimChatNotices claims from chatNoticeQueue; due is the hub's clock (now).
func (q queries) ClaimChatNotices(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) (_ []*core.ClaimedChatNotice, err error) {
	defer wrapErr(&err, "claim chat notices")
	var rows []chatNoticeRow
	if err := chatNoticeQueue.claim(ctx, q, &rows, token, leaseFor, limit, now); err != nil {
		return nil, err
	}
	out := make([]*core.ClaimedChatNotice, len(rows))
	for i, r := range rows {
		out[i] = &core.ClaimedChatNotice{
			ID: r.ID, Key: r.Key, Kind: r.Kind, SealedText: r.TextSealed, WorkspaceID: r.WorkspaceID, Code: r.Code,
			RefersTo: r.RefersTo.String, RefersRef: r.RefersRef.String, RefersSealed: r.RefersSealed,
			Place:         core.ChatPlace{Platform: r.Platform, TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadID: r.ThreadID},
			ChatPostState: core.ChatPostState{PartsPosted: r.PartsPosted, Attempts: r.Attempts, CreatedAt: r.CreatedAt, Lease: r.Lease},
		}
	}
	return out, nil
}

// SettleChatNotice is fenced by the lease token.
func (q queries) SettleChatNotice(ctx context.Context, n *core.ClaimedChatNotice, token string) (_ bool, err error) {
	defer wrapErr(&err, "settle chat notice")
	return chatNoticeQueue.settle(ctx, q, []any{n.ID}, token, append(postSettlement(n.ChatPostState),
		set{col: "message_ref", val: n.MessageRef})...)
}
