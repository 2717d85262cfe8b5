package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/core"
)

type turnEventRow struct {
	Seq         int64              `db:"seq"`
	WorkspaceID string             `db:"workspace_id"`
	TurnID      string             `db:"turn_id"`
	Type        core.TurnEventType `db:"type"`
	BodySealed  []byte             `db:"body_sealed"`
	CreatedAt   time.Time          `db:"created_at"`
}

// turnEventColumns are what a stored event is read from.
const turnEventColumns = `seq, workspace_id, turn_id, type, body_sealed, created_at`

// InsertTurnEvents inserts a batch of one workspace's events in one statement,
// numbered on from the workspace's event_seq in the batch's order (WITH ORDINALITY).
func (q queries) InsertTurnEvents(ctx context.Context, events []*core.StoredTurnEvent) (err error) {
	defer wrapErr(&err, "insert turn events")
	if len(events) == 0 {
		return nil
	}
	for _, e := range events[1:] {
		if e.WorkspaceID != events[0].WorkspaceID {
			return fmt.Errorf("a batch of events is one workspace's, not %s and %s", events[0].WorkspaceID, e.WorkspaceID)
		}
	}
	ws, turns, types := make([]string, len(events)), make([]string, len(events)), make([]string, len(events))
	bodies, at := make([][]byte, len(events)), make([]string, len(events))
	for i, e := range events {
		ws[i], turns[i], types[i], bodies[i], at[i] = e.WorkspaceID, e.TurnID, string(e.Type), e.SealedBody, e.CreatedAt.UTC().Format(time.RFC3339Nano)
	}
	var seqs []int64
	err = q.selectAll(ctx, &seqs, `WITH s AS (
			UPDATE workspaces SET event_seq = event_seq + $6 WHERE id = $7 RETURNING event_seq - $6 AS base)
		INSERT INTO turn_events (workspace_id, turn_id, type, body_sealed, created_at, seq)
		SELECT w, t, ty, b, a, s.base + n FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[])
		WITH ORDINALITY AS x(w, t, ty, b, a, n), s ORDER BY n
		RETURNING seq`, pq.StringArray(ws), pq.StringArray(turns), pq.StringArray(types), pq.ByteaArray(bodies), pq.StringArray(at),
		len(events), events[0].WorkspaceID)
	if err == nil && len(seqs) != len(events) {
		err = fmt.Errorf("workspace %s is gone: %w", events[0].WorkspaceID, core.ErrNoRows)
	}
	if err == nil {
		slices.Sort(seqs) // RETURNING's order is not promised; the numbers are the batch's order
		for i := range events {
			events[i].Seq = seqs[i]
		}
	}
	return err
}

// ListTurnEvents reads turn_events_workspace_seq.
func (q queries) ListTurnEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) (_ []*core.StoredTurnEvent, err error) {
	defer wrapErr(&err, "list turn events")
	var rows []turnEventRow
	if err := q.selectAll(ctx, &rows, `SELECT `+turnEventColumns+` FROM turn_events
		WHERE workspace_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, workspaceID, afterSeq, limit); err != nil {
		return nil, err
	}
	return storedEvents(rows), nil
}

func storedEvents(rows []turnEventRow) []*core.StoredTurnEvent {
	out := make([]*core.StoredTurnEvent, len(rows))
	for i, r := range rows {
		out[i] = &core.StoredTurnEvent{Seq: r.Seq, WorkspaceID: r.WorkspaceID, TurnID: r.TurnID, Type: r.Type,
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
