package postgres

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type turnEventRow struct {
	ID          int64              `db:"id"`
	WorkspaceID string             `db:"workspace_id"`
	TurnID      string             `db:"turn_id"`
	Type        core.TurnEventType `db:"type"`
	BodySealed  []byte             `db:"body_sealed"`
	CreatedAt   time.Time          `db:"created_at"`
}

// InsertTurnEvents inserts a batch in one statement; ids follow the batch's order
// (WITH ORDINALITY ... ORDER BY).
func (q queries) InsertTurnEvents(ctx context.Context, events []*core.StoredTurnEvent) (err error) {
	defer wrapErr(&err, "insert turn events")
	if len(events) == 0 {
		return nil
	}
	ws, turns, types := make([]string, len(events)), make([]string, len(events)), make([]string, len(events))
	bodies, at := make([][]byte, len(events)), make([]string, len(events))
	for i, e := range events {
		ws[i], turns[i], types[i], bodies[i], at[i] = e.WorkspaceID, e.TurnID, string(e.Type), e.SealedBody, e.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	var ids []int64
	err = q.selectAll(ctx, &ids, `INSERT INTO turn_events (workspace_id, turn_id, type, body_sealed, created_at)
		SELECT w, t, ty, b, a FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[])
		WITH ORDINALITY AS x(w, t, ty, b, a, n) ORDER BY n
		RETURNING id`, pq.StringArray(ws), pq.StringArray(turns), pq.StringArray(types), pq.ByteaArray(bodies), pq.StringArray(at))
	if err == nil && len(ids) == len(events) {
		for i := range events {
			events[i].Seq = ids[i]
		}
	}
	return err
}

// ListTurnEvents reads turn_events_workspace.
func (q queries) ListTurnEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) (_ []*core.StoredTurnEvent, err error) {
	defer wrapErr(&err, "list turn events")
	var rows []turnEventRow
	if err := q.selectAll(ctx, &rows, `SELECT id, workspace_id, turn_id, type, body_sealed, created_at FROM turn_events
		WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3`, workspaceID, afterSeq, limit); err != nil {
		return nil, err
	}
	return storedEvents(rows), nil
}

func storedEvents(rows []turnEventRow) []*core.StoredTurnEvent {
	out := make([]*core.StoredTurnEvent, len(rows))
	for i, r := range rows {
		out[i] = &core.StoredTurnEvent{Seq: r.ID, WorkspaceID: r.WorkspaceID, TurnID: r.TurnID, Type: r.Type,
			SealedBody: r.BodySealed, CreatedAt: r.CreatedAt}
	}
	return out
}

// CountTurnEvents reads turn_events_turn.
func (q queries) CountTurnEvents(ctx context.Context, workspaceID, turnID string) (_ int, err error) {
	defer wrapErr(&err, "count turn events")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM turn_events WHERE workspace_id = $1 AND turn_id = $2`, workspaceID, turnID)
	return n, err
}
