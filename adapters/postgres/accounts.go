package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/wshub/wshub/core"
)

type accountRow struct {
	ID               string         `db:"id"`
	Name             string         `db:"name"`
	Entitled         bool           `db:"entitled"`
	BillingHold      bool           `db:"billing_hold"`
	Metered          bool           `db:"metered"`
	BillingPeriodEnd sql.NullTime   `db:"billing_period_end"`
	MaxWorkspaces    sql.NullInt64  `db:"max_workspaces"`
	MaxOpenMessages  sql.NullInt64  `db:"max_open_messages"`
	MaxRunningTurns  sql.NullInt64  `db:"max_running_turns"`
	MaxKeys          sql.NullInt64  `db:"max_keys"`
	ProviderID       sql.NullString `db:"provider_id"`
	CreatedAt        time.Time      `db:"created_at"`
}

func (r *accountRow) core() *core.Account {
	return &core.Account{ID: r.ID, Name: r.Name, Entitled: r.Entitled, BillingHold: r.BillingHold, Metered: r.Metered,
		BillingPeriodEnd: timePtr(r.BillingPeriodEnd), MaxWorkspaces: intPtr(r.MaxWorkspaces), MaxOpenMessages: intPtr(r.MaxOpenMessages),
		MaxRunningTurns: intPtr(r.MaxRunningTurns), MaxKeys: intPtr(r.MaxKeys), ProviderID: r.ProviderID.String, CreatedAt: r.CreatedAt}
}

// dest lists r's fields in accountColumns' order, for rows.Scan (AccountByKeyHash
// runs on every request; TestAccountScanMatchesItsColumns holds the order).
func (r *accountRow) dest() []any {
	return []any{&r.ID, &r.Name, &r.Entitled, &r.BillingHold, &r.Metered, &r.BillingPeriodEnd, &r.MaxWorkspaces,
		&r.MaxOpenMessages, &r.MaxRunningTurns, &r.MaxKeys, &r.ProviderID, &r.CreatedAt}
}

func intPtr(n sql.NullInt64) *int {
	if !n.Valid {
		return nil
	}
	v := int(n.Int64)
	return &v
}

func nullIntPtr(p *int) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: int64(*p), Valid: true}
}

const accountColumns = `a.id, a.name, a.entitled, a.billing_hold, a.metered, a.billing_period_end, a.max_workspaces, a.max_open_messages, a.max_running_turns, a.max_keys, a.provider_id, a.created_at`

func (q queries) CreateAccount(ctx context.Context, a *core.Account) (err error) {
	defer wrapErr(&err, "create account")
	_, err = q.exec(ctx, `INSERT INTO accounts (id, name, entitled, billing_hold, metered, billing_period_end, max_workspaces, max_open_messages, max_running_turns, provider_id, created_at, max_keys)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11, $10, $12)`, a.ID, a.Name, a.Entitled, a.BillingHold, a.Metered, nullTime(a.BillingPeriodEnd),
		nullIntPtr(a.MaxWorkspaces), nullIntPtr(a.MaxOpenMessages), nullIntPtr(a.MaxRunningTurns), a.CreatedAt, nullString(a.ProviderID), nullIntPtr(a.MaxKeys))
	return err
}

func (q queries) UpdateAccount(ctx context.Context, a *core.Account) (err error) {
	defer wrapErr(&err, "update account")
	_, err = q.exec(ctx, `UPDATE accounts SET entitled = $2, billing_hold = $3, metered = $4, billing_period_end = $5,
		max_workspaces = $6, max_open_messages = $7, max_running_turns = $8, provider_id = $9, max_keys = $10 WHERE id = $1`,
		a.ID, a.Entitled, a.BillingHold, a.Metered, nullTime(a.BillingPeriodEnd), nullIntPtr(a.MaxWorkspaces), nullIntPtr(a.MaxOpenMessages),
		nullIntPtr(a.MaxRunningTurns), nullString(a.ProviderID), nullIntPtr(a.MaxKeys))
	return err
}

// CountWork runs at each metrics scrape: one grouped count over workspaces (a
// sequential scan; a scrape every 15 s or more makes it negligible next to the
// workers' own queries) and the open messages through messages_open.
func (q queries) CountWork(ctx context.Context) (_ *core.WorkCounts, err error) {
	defer wrapErr(&err, "count work")
	var rows []struct {
		State string `db:"state"`
		N     int64  `db:"n"`
	}
	if err := q.selectAll(ctx, &rows, `SELECT state, count(*) AS n FROM workspaces WHERE state <> 'deleted' GROUP BY state`); err != nil {
		return nil, err
	}
	out := &core.WorkCounts{ByState: make(map[string]int64, len(rows))}
	for _, r := range rows {
		out.ByState[r.State] = r.N
	}
	// Open messages per workspace, folded: the partial index messages_open holds just
	// these rows, grouped by its leading column.
	var open struct {
		Total   int64 `db:"total"`
		Busy    int64 `db:"busy"`
		Deepest int64 `db:"deepest"`
	}
	if err := q.get(ctx, &open, `SELECT coalesce(sum(n), 0) AS total, count(*) AS busy, coalesce(max(n), 0) AS deepest
		FROM (SELECT count(*) AS n FROM messages WHERE role = 'user' AND status IN ('pending', 'delivered')
			GROUP BY workspace_id) per_workspace`); err != nil {
		return nil, err
	}
	out.OpenMessages, out.BusyWorkspaces, out.DeepestQueue = open.Total, open.Busy, open.Deepest
	return out, nil
}

// ListAccounts reads the whole table: an operator command, not a request path.
func (q queries) ListAccounts(ctx context.Context) (_ []*core.Account, err error) {
	defer wrapErr(&err, "list accounts")
	var rows []accountRow
	if err := q.selectAll(ctx, &rows, `SELECT `+accountColumns+` FROM accounts a ORDER BY a.created_at, a.id`); err != nil {
		return nil, err
	}
	out := make([]*core.Account, len(rows))
	for i := range rows {
		out[i] = rows[i].core()
	}
	return out, nil
}

type apiKeyRow struct {
	ID        string       `db:"id"`
	AccountID string       `db:"account_id"`
	Name      string       `db:"name"`
	CreatedAt time.Time    `db:"created_at"`
	RevokedAt sql.NullTime `db:"revoked_at"`
	LastUsed  sql.NullTime `db:"last_used_at"`
	CreatedBy string       `db:"created_by"`
	ByName    string       `db:"created_by_name"`
	keyLimitsRow
}

// ListAPIKeys reads through api_keys_account; the hash is never read back.
func (q queries) ListAPIKeys(ctx context.Context, accountID string) (_ []*core.APIKey, err error) {
	defer wrapErr(&err, "list API keys")
	var rows []apiKeyRow
	if err := q.selectAll(ctx, &rows, `SELECT k.id, k.account_id, k.name, k.created_at, k.revoked_at, k.last_used_at, k.created_by,
		coalesce(m.name, '') AS created_by_name, `+keyLimitsColumns+`
		FROM api_keys k LEFT JOIN members m ON m.id = k.created_by
		WHERE k.account_id = $1 ORDER BY k.created_at, k.id`, accountID); err != nil {
		return nil, err
	}
	out := make([]*core.APIKey, len(rows))
	for i, r := range rows {
		out[i] = &core.APIKey{ID: r.ID, AccountID: r.AccountID, Name: r.Name, CreatedAt: r.CreatedAt, RevokedAt: timePtr(r.RevokedAt),
			LastUsedAt: timePtr(r.LastUsed), CreatedBy: r.CreatedBy, CreatedByName: r.ByName, Limits: r.keyLimitsRow.core()}
	}
	return out, nil
}

func (q queries) GetAPIKey(ctx context.Context, id string) (_ *core.APIKey, err error) {
	defer wrapErr(&err, "get API key")
	var r apiKeyRow
	if err := q.get(ctx, &r, `SELECT k.id, k.account_id, k.name, k.created_at, k.revoked_at, k.last_used_at, k.created_by,
		'' AS created_by_name, `+keyLimitsColumns+` FROM api_keys k WHERE k.id = $1`, id); err != nil {
		return nil, err
	}
	return &core.APIKey{ID: r.ID, AccountID: r.AccountID, Name: r.Name, CreatedAt: r.CreatedAt, RevokedAt: timePtr(r.RevokedAt),
		LastUsedAt: timePtr(r.LastUsed), CreatedBy: r.CreatedBy, Limits: r.keyLimitsRow.core()}, nil
}

func (q queries) GetAccount(ctx context.Context, id string) (_ *core.Account, err error) {
	defer wrapErr(&err, "get account")
	var r accountRow
	if err := q.get(ctx, &r, `SELECT `+accountColumns+` FROM accounts a WHERE a.id = $1`, id); err != nil {
		return nil, err
	}
	return r.core(), nil
}

func (q queries) LockAccount(ctx context.Context, id string) (err error) {
	defer wrapErr(&err, "lock account")
	var got string
	// NO KEY UPDATE, not UPDATE: it serialises the account's quota checks as well, and
	// does not conflict with the KEY SHARE lock a row referencing the account (a
	// receipt, a workspace) takes. With FOR UPDATE, two creates that had each inserted
	// their idempotency receipt waited on each other's KEY SHARE: a deadlock (40P01),
	// dozens a minute with two hubs (make soak HUBS=2).
	return q.get(ctx, &got, `SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE`, id)
}

func (q queries) CreateAPIKey(ctx context.Context, k *core.APIKey) (err error) {
	defer wrapErr(&err, "create API key")
	_, err = q.exec(ctx, `INSERT INTO api_keys (id, account_id, name, hash, created_at, created_by, scopes, project_ids, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		append([]any{k.ID, k.AccountID, k.Name, k.Hash, k.CreatedAt, k.CreatedBy}, keyLimitsArgs(k.Limits)...)...)
	return err
}

// CountLiveAPIKeys counts through api_keys_live, under the account's lock.
func (q queries) CountLiveAPIKeys(ctx context.Context, accountID string) (_ int, err error) {
	defer wrapErr(&err, "count live API keys")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`, accountID)
	return n, err
}

func (q queries) RevokeAPIKey(ctx context.Context, id string, at time.Time) (_ bool, err error) {
	defer wrapErr(&err, "revoke API key")
	n, err := q.exec(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, id, at)
	return n == 1, err
}

// AccountByKeyHash uses api_keys_hash. It is a plain read on every request; the key's
// last use is written by a second statement only when the stamp is over a minute old
// (a data-modifying CTE on every request cost about 15% of a small GET's time).
func (q queries) AccountByKeyHash(ctx context.Context, hash []byte) (_ *core.Account, err error) {
	defer wrapErr(&err, "account by key hash")
	// Scanned by hand, not by sqlx: this is every request's first statement.
	var (
		r              accountRow
		limits         keyLimitsRow
		keyID, keyName string
		stale          bool
	)
	err = q.queryRow(ctx, `SELECT `+accountColumns+`, k.id, k.name,
			(k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute'), `+keyLimitsColumns+`
		FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash).
		Scan(append(append(r.dest(), &keyID, &keyName, &stale), limits.dest()...)...)
	if err != nil {
		return nil, mapErr(err)
	}
	if stale {
		// Only a stale row is matched, so concurrent requests write it once; a failed
		// stamp does not fail the request. An expired key is refused (core decides), so
		// its tries are no use.
		_, _ = q.exec(ctx, `UPDATE api_keys SET last_used_at = date_trunc('second', now())
			WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
			AND (expires_at IS NULL OR expires_at > now())`, keyID)
	}
	a := r.core()
	a.KeyID, a.KeyName, a.KeyLimits = keyID, keyName, limits.core()
	return a, nil
}
