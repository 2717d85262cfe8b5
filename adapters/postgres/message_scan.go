package postgres

import (
	"context"
	"database/sql"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

// messageColumns are what messageScan reads, in its order.
const messageColumns = `id, workspace_id, seq, role, text_sealed, status, turn_id, outcome, asset_ids, failure_code,
	failure_agent, failure_sealed, created_at, delivered_at, stop_requested_at, author_kind, author_id, author_name,
	author_member_id, author_url`

// messageScan reads message rows by hand rather than through sqlx's reflection: a
// page is up to 200 rows on the API's hottest list (make bench B2), and reflection
// there cost more than the rows' decoding. Its destinations and their []any are made
// once per query, not per row.
type messageScan struct {
	m                                                        core.StoredMessage
	status, outcome                                          sql.NullString
	assets                                                   pq.StringArray
	failureCode, failureAgent                                sql.NullString
	delivered, stop                                          sql.NullTime
	authorKind, authorID, authorName, authorMembr, authorURL sql.NullString
	dest                                                     []any
}

func newMessageScan() *messageScan {
	s := &messageScan{}
	m := &s.m
	s.dest = []any{&m.ID, &m.WorkspaceID, &m.Seq, &m.Role, &m.SealedText, &s.status, &m.TurnID, &s.outcome, &s.assets,
		&s.failureCode, &s.failureAgent, &m.SealedFailure, &m.CreatedAt, &s.delivered, &s.stop, &s.authorKind,
		&s.authorID, &s.authorName, &s.authorMembr, &s.authorURL}
	return s
}

// scan reads the current row into out.
func (s *messageScan) scan(rows interface{ Scan(...any) error }, out *core.StoredMessage) error {
	s.m, s.assets = core.StoredMessage{}, nil
	if err := rows.Scan(s.dest...); err != nil {
		return err
	}
	m := &s.m
	m.Status, m.Outcome, m.AssetIDs = core.MessageStatus(s.status.String), core.Outcome(s.outcome.String), s.assets
	m.DeliveredAt = timePtr(s.delivered)
	m.FailureCode, m.FailureAgent, m.StopRequested = s.failureCode.String, s.failureAgent.String, s.stop.Valid
	if s.authorKind.String != "" {
		m.Author = &core.Author{Kind: s.authorKind.String, ID: s.authorID.String, Name: s.authorName.String, MemberID: s.authorMembr.String,
			URL: s.authorURL.String}
	}
	*out = *m
	return nil
}

// queryMessages runs a SELECT of messageColumns and returns its rows, at most limit
// of them held in one backing array.
func (q queries) queryMessages(ctx context.Context, limit int, query string, args ...any) ([]*core.StoredMessage, error) {
	rows, err := q.query(ctx, `SELECT `+messageColumns+` FROM messages `+query, args...)
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	s := newMessageScan()
	page := make([]core.StoredMessage, 0, min(limit, 256))
	for rows.Next() {
		page = append(page, core.StoredMessage{})
		if err := s.scan(rows, &page[len(page)-1]); err != nil {
			return nil, mapErr(err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, mapErr(err)
	}
	out := make([]*core.StoredMessage, len(page))
	for i := range page {
		out[i] = &page[i]
	}
	return out, nil
}

// oneMessage is queryMessages for a query of at most one row: core.ErrNoRows if none.
func (q queries) oneMessage(ctx context.Context, query string, args ...any) (*core.StoredMessage, error) {
	found, err := q.queryMessages(ctx, 1, query, args...)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, core.ErrNoRows
	}
	return found[0], nil
}
