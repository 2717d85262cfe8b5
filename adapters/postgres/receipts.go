package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/wshub/wshub/core"
)

type receiptRow struct {
	AccountID   string    `db:"account_id"`
	Scope       string    `db:"scope"`
	Key         string    `db:"key"`
	Fingerprint []byte    `db:"fingerprint"`
	ResourceID  string    `db:"resource_id"`
	Result      []byte    `db:"result"`
	CreatedAt   time.Time `db:"created_at"`
}

// ClaimIdempotencyKey relies on INSERT ... ON CONFLICT DO NOTHING waiting for a concurrent
// inserter of the same key: when that transaction commits, the SELECT (a new statement,
// so a new READ COMMITTED snapshot) sees its receipt; when it rolls back, our insert wins.
func (q queries) ClaimIdempotencyKey(ctx context.Context, r *core.Receipt) (_ *core.Receipt, _ bool, err error) {
	defer wrapErr(&err, "claim idempotency key")
	var inserted string
	err = q.get(ctx, &inserted, `INSERT INTO idempotency_receipts (account_id, scope, key, fingerprint, resource_id, result, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (account_id, scope, key) DO NOTHING RETURNING resource_id`,
		r.AccountID, r.Scope, r.Key, r.Fingerprint, r.ResourceID, nullJSON(r.Result), r.CreatedAt)
	if err == nil {
		return r, true, nil
	}
	if !errors.Is(err, core.ErrNoRows) {
		return nil, false, err
	}
	var row receiptRow
	if err := q.get(ctx, &row, `SELECT account_id, scope, key, fingerprint, resource_id, result, created_at
		FROM idempotency_receipts WHERE account_id = $1 AND scope = $2 AND key = $3`, r.AccountID, r.Scope, r.Key); err != nil {
		return nil, false, err
	}
	stored := core.Receipt(row)
	return &stored, false, nil
}

func (q queries) SetReceiptResult(ctx context.Context, r *core.Receipt) (err error) {
	defer wrapErr(&err, "set receipt result")
	_, err = q.exec(ctx, `UPDATE idempotency_receipts SET result = $4 WHERE account_id = $1 AND scope = $2 AND key = $3`,
		r.AccountID, r.Scope, r.Key, nullJSON(r.Result))
	return err
}

func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
