package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/migrations"
)

// Accounts made before accounts.metered existed keep how they were treated: one with
// no billing period end was never checked (not metered), one with a period end was.
// Accounts made afterwards are metered unless said otherwise.
func TestMeteredMigrationKeepsExistingAccountsAsTreated(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("postgres", pgtest.NewEmptyDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 7); err != nil {
		t.Fatalf("migrate to 7: %v", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, name, entitled, billing_period_end, created_at) VALUES
		('acct_unchecked', 'no period', true, NULL, now()),
		('acct_expired', 'period over', true, now() - interval '1 day', now()),
		('acct_current', 'period current', true, now() + interval '1 day', now())`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 8); err != nil {
		t.Fatalf("migrate to 8: %v", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at) VALUES ('acct_new', 'new', now())`); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"acct_unchecked": false, "acct_expired": true, "acct_current": true, "acct_new": true}
	for id, metered := range want {
		var got bool
		if err := db.QueryRowContext(ctx, `SELECT metered FROM accounts WHERE id = $1`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != metered {
			t.Errorf("%s: expected metered %v, got %v", id, metered, got)
		}
	}
}
