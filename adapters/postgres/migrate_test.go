package postgres_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	_ "github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
)

// Replicas started together migrate one after the other: every run succeeds, each
// migration is applied once, and a later run finds nothing to do.
func TestConcurrentMigrationsApplyEachOnce(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	const replicas = 4
	dbs := make([]*sql.DB, replicas)
	for i := range dbs {
		db, err := sql.Open("postgres", url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Ping(); err != nil { // connected before the race starts
			t.Fatal(err)
		}
		dbs[i] = db
	}
	ctx := context.Background()
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = postgres.Migrate(ctx, db)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: expected its migration run to succeed, got %v", i, err)
		}
	}
	var applied, distinct int
	if err := dbs[0].QueryRow(`SELECT count(*), count(DISTINCT version_id) FROM goose_db_version WHERE version_id > 0 AND is_applied`).
		Scan(&applied, &distinct); err != nil {
		t.Fatal(err)
	}
	if applied == 0 || applied != distinct {
		t.Fatalf("expected each migration applied once, got %d rows for %d versions", applied, distinct)
	}
	if err := postgres.Migrate(ctx, dbs[1]); err != nil {
		t.Fatalf("expected a later run to find nothing to do, got %v", err)
	}
	var tables int
	if err := dbs[0].QueryRow(`SELECT count(*) FROM pg_tables WHERE tablename IN ('workspaces', 'chat_notices')`).Scan(&tables); err != nil || tables != 2 {
		t.Fatalf("expected the schema in place, got %d tables (%v)", tables, err)
	}
}
