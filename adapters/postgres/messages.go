package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type messageRow struct {
	ID            string         `db:"id"`
	WorkspaceID   string         `db:"workspace_id"`
	Seq           int64          `db:"seq"`
	Role          string         `db:"role"`
	TextSealed    []byte         `db:"text_sealed"`
	Status        string         `db:"status"`
	TurnID        string         `db:"turn_id"`
	Outcome       sql.NullString `db:"outcome"`
	AssetIDs      pq.StringArray `db:"asset_ids"`
	FailureCode   sql.NullString `db:"failure_code"`
	FailureAgent  sql.NullString `db:"failure_agent"`
	FailureSealed []byte         `db:"failure_sealed"`
	CreatedAt     time.Time      `db:"created_at"`
	DeliveredAt   sql.NullTime   `db:"delivered_at"`
	StopRequested sql.NullTime   `db:"stop_requested_at"`
	AuthorKind    string         `db:"author_kind"`
	AuthorID      string         `db:"author_id"`
	AuthorName    string         `db:"author_name"`
	AuthorMember  sql.NullString `db:"author_member_id"`
}

func (r *messageRow) core() *core.StoredMessage {
	var author *core.Author
	if r.AuthorKind != "" {
		author = &core.Author{Kind: r.AuthorKind, ID: r.AuthorID, Name: r.AuthorName, MemberID: r.AuthorMember.String}
	}
	return &core.StoredMessage{
		Message: core.Message{
			ID: r.ID, WorkspaceID: r.WorkspaceID, Seq: r.Seq, Role: r.Role, Status: core.MessageStatus(r.Status), TurnID: r.TurnID,
			Outcome: core.Outcome(r.Outcome.String), CreatedAt: r.CreatedAt, DeliveredAt: timePtr(r.DeliveredAt), AssetIDs: r.AssetIDs,
			Author: author,
		},
		SealedText: r.TextSealed, FailureCode: r.FailureCode.String, FailureAgent: r.FailureAgent.String,
		SealedFailure: r.FailureSealed, StopRequested: r.StopRequested.Valid,
	}
}

const messageColumns = `id, workspace_id, seq, role, text_sealed, status, turn_id, outcome, asset_ids, failure_code,
	failure_agent, failure_sealed, created_at, delivered_at, stop_requested_at, author_kind, author_id, author_name,
	author_member_id`

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

func (q queries) InsertMessage(ctx context.Context, m *core.Message, sealedText []byte) (err error) {
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
	_, err = q.exec(ctx, `INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, outcome,
		asset_ids, created_at, delivered_at, author_kind, author_id, author_name, author_member_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, COALESCE($15,
			(SELECT member_id FROM member_identities WHERE kind = $16 AND subject = $17)))`,
		m.ID, m.WorkspaceID, m.Seq, m.Role, sealedText, m.Status, m.TurnID, nullString(string(m.Outcome)),
		pq.StringArray(assets), m.CreatedAt, nullTime(m.DeliveredAt), a.Kind, a.ID, a.Name, nullString(a.MemberID),
		a.Via.Kind, a.Via.Subject)
	return err
}

func (q queries) GetMessage(ctx context.Context, workspaceID, id string) (_ *core.StoredMessage, err error) {
	defer wrapErr(&err, "get message")
	var r messageRow
	if err := q.get(ctx, &r, `SELECT `+messageColumns+` FROM messages WHERE workspace_id = $1 AND id = $2`, workspaceID, id); err != nil {
		return nil, err
	}
	return r.core(), nil
}

// ListMessages uses the (workspace_id, seq) unique index.
func (q queries) ListMessages(ctx context.Context, workspaceID string, afterSeq int64, limit int) (_ []*core.StoredMessage, err error) {
	defer wrapErr(&err, "list messages")
	var rows []messageRow
	if err := q.selectAll(ctx, &rows, `SELECT `+messageColumns+` FROM messages WHERE workspace_id = $1 AND seq > $2
		ORDER BY seq LIMIT $3`, workspaceID, afterSeq, limit); err != nil {
		return nil, err
	}
	out := make([]*core.StoredMessage, len(rows))
	for i := range rows {
		out[i] = rows[i].core()
	}
	return out, nil
}

// RequestStop marks a user message's turn to be stopped.
func (q queries) RequestStop(ctx context.Context, messageID string, at time.Time) (err error) {
	defer wrapErr(&err, "request stop")
	_, err = q.exec(ctx, `UPDATE messages SET stop_requested_at = COALESCE(stop_requested_at, $2) WHERE id = $1`, messageID, at)
	return err
}
