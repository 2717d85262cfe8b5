package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

func (q queries) InsertAudit(ctx context.Context, e *core.AuditEntry) (err error) {
	defer wrapErr(&err, "insert audit entry")
	_, err = q.exec(ctx, `INSERT INTO audit_log (account_id, at, actor, actor_name, action, target, detail, address)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, e.AccountID, e.At, e.Actor, e.ActorName, e.Action, e.Target, e.Detail, e.Address)
	return err
}

// ListAudit pages through audit_log_account, newest first.
func (q queries) ListAudit(ctx context.Context, accountID string, before int64, limit int) (_ []*core.AuditEntry, err error) {
	defer wrapErr(&err, "list audit log")
	var rows []struct {
		ID        int64     `db:"id"`
		At        time.Time `db:"at"`
		Actor     string    `db:"actor"`
		ActorName string    `db:"actor_name"`
		Action    string    `db:"action"`
		Target    string    `db:"target"`
		Detail    string    `db:"detail"`
		Address   string    `db:"address"`
	}
	if err := q.selectAll(ctx, &rows, `SELECT id, at, actor, actor_name, action, target, detail, address FROM audit_log
		WHERE account_id = $1 AND ($2 = 0 OR id < $2) ORDER BY id DESC LIMIT $3`, accountID, before, limit); err != nil {
		return nil, err
	}
	out := make([]*core.AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = &core.AuditEntry{ID: r.ID, AccountID: accountID, At: r.At, Actor: r.Actor, ActorName: r.ActorName,
			Action: r.Action, Target: r.Target, Detail: r.Detail, Address: r.Address}
	}
	return out, nil
}
