package postgres

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

type webhookRow struct {
	ID           string    `db:"id"`
	AccountID    string    `db:"account_id"`
	URL          string    `db:"url"`
	Description  string    `db:"description"`
	SecretSealed []byte    `db:"secret_sealed"`
	CreatedAt    time.Time `db:"created_at"`
}

// CountWebhooks uses webhooks_account.
func (q queries) CountWebhooks(ctx context.Context, accountID string) (_ int, err error) {
	defer wrapErr(&err, "count webhooks")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM webhooks WHERE account_id = $1`, accountID)
	return n, err
}

func (q queries) InsertWebhook(ctx context.Context, w *core.Webhook) (err error) {
	defer wrapErr(&err, "insert webhook")
	_, err = q.exec(ctx, `INSERT INTO webhooks (id, account_id, url, description, secret_sealed, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, w.ID, w.AccountID, w.URL, w.Description, w.SealedSecret, w.CreatedAt)
	return err
}

// ListWebhooks uses webhooks_account; position is the registration order.
func (q queries) ListWebhooks(ctx context.Context, accountID string) (_ []*core.Webhook, err error) {
	defer wrapErr(&err, "list webhooks")
	var rows []webhookRow
	if err := q.selectAll(ctx, &rows, `SELECT id, account_id, url, description, secret_sealed, created_at
		FROM webhooks WHERE account_id = $1 ORDER BY position`, accountID); err != nil {
		return nil, err
	}
	out := make([]*core.Webhook, len(rows))
	for i, r := range rows {
		out[i] = &core.Webhook{ID: r.ID, AccountID: r.AccountID, URL: r.URL, Description: r.Description,
			SealedSecret: r.SecretSealed, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// GetWebhook is a primary-key lookup, narrowed to the account.
func (q queries) GetWebhook(ctx context.Context, accountID, id string) (_ *core.Webhook, err error) {
	defer wrapErr(&err, "get webhook")
	var r webhookRow
	if err := q.get(ctx, &r, `SELECT id, account_id, url, description, secret_sealed, created_at
		FROM webhooks WHERE id = $1 AND account_id = $2`, id, accountID); err != nil {
		return nil, err
	}
	return &core.Webhook{ID: r.ID, AccountID: r.AccountID, URL: r.URL, Description: r.Description,
		SealedSecret: r.SecretSealed, CreatedAt: r.CreatedAt}, nil
}

func (q queries) DeleteWebhook(ctx context.Context, accountID, id string) (_ bool, err error) {
	defer wrapErr(&err, "delete webhook")
	n, err := q.exec(ctx, `DELETE FROM webhooks WHERE account_id = $1 AND id = $2`, accountID, id)
	return n == 1, err
}
