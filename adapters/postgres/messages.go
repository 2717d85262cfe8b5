package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// linkedMember is the SQL of the member who linked the identity (kind, subject) and
// belongs to the account: a forge login is the same whichever hub account's
// repository it comments on, and another account's member must not be named (nor
// their email given) in this one's commits.
func linkedMember(kind, subject, account string) string {
	return `(SELECT i.member_id FROM member_identities i JOIN memberships ms ON ms.member_id = i.member_id
		AND ms.account_id = ` + account + ` WHERE i.kind = ` + kind + ` AND i.subject = ` + subject + `)`
}

// InsertMessage takes the workspace's next seq and inserts the message with it in one
// statement (the send path's round trips are most of its cost), setting m.Seq. The
// quota's count (messages_open) is the seq update's condition, so a refused message
// takes no seq.
func (q queries) InsertMessage(ctx context.Context, m *core.Message, sealedText []byte, maxOpen int) (_ bool, err error) {
	defer wrapErr(&err, "insert message")
	assets := m.AssetIDs
	if assets == nil {
		assets = []string{}
	}
	var a core.Author
	if m.Author != nil {
		a = *m.Author
	}
	// The member behind a chat author is found by the identity they linked, in the
	// same statement.
	err = mapErr(q.queryRow(ctx, `WITH s AS (UPDATE workspaces SET latest_seq = latest_seq + 1, updated_at = $9,
			last_activity_at = $9 WHERE id = $2 AND ($17 = 0 OR (SELECT count(*) FROM messages o WHERE o.workspace_id = $2
				AND o.role = 'user' AND o.status IN ('pending', 'delivered')) < $17)
			RETURNING latest_seq)
		INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome,
			asset_ids, created_at, delivered_at, author_kind, author_id, author_name, author_member_id, author_url)
		SELECT $1, $2, s.latest_seq, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, COALESCE($14,
			`+linkedMember("$15", "$16", "(SELECT account_id FROM workspaces WHERE id = $2)")+`), $18
		FROM s RETURNING seq`,
		m.ID, m.WorkspaceID, m.Role, sealedText, m.Status, m.TurnID, nullString(string(m.Outcome)),
		pq.StringArray(assets), m.CreatedAt, nullTime(m.DeliveredAt), a.Kind, a.ID, a.Name, nullString(a.MemberID),
		a.Via.Kind, a.Via.Subject, maxOpen, nullString(a.URL)).Scan(&m.Seq))
	if errors.Is(err, core.ErrNoRows) {
		return false, nil // at the quota (the caller holds the workspace's row lock: it is there)
	}
	return err == nil, err
}

func (q queries) GetMessage(ctx context.Context, workspaceID, id string) (_ *core.StoredMessage, err error) {
	defer wrapErr(&err, "get message")
	return q.oneMessage(ctx, `WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
}

// ListMessages uses the (workspace_id, seq) unique index.
func (q queries) ListMessages(ctx context.Context, workspaceID string, afterSeq int64, limit int) (_ []*core.StoredMessage, err error) {
	defer wrapErr(&err, "list messages")
	return q.queryMessages(ctx, limit, `WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, workspaceID, afterSeq, limit)
}

// RequestStop marks a user message's turn to be stopped.
func (q queries) RequestStop(ctx context.Context, messageID string, at time.Time) (err error) {
	defer wrapErr(&err, "request stop")
	_, err = q.exec(ctx, `UPDATE messages SET stop_requested_at = COALESCE(stop_requested_at, $2) WHERE id = $1`, messageID, at)
	return err
}
