package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// A hot statement is prepared in the background, never by a request waiting for a
// connection of its own: on a pool of one connection, a transaction that runs a
// statement for the first time finishes (preparing on the pool there would wait for
// the transaction's own connection forever), and the statement is prepared on the
// session once the connection is free.
func TestHotStatementsArePreparedWithoutWaitingForAConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, url := pgtest.NewStore(t)
	store, err := postgres.Open(ctx, url, postgres.Options{MaxOpenConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for range 3 {
		err := store.InTx(ctx, func(q core.Queries) error {
			_, err := q.GetWorkspace(ctx, "acct_none", "ws_none")
			return err
		})
		if !errors.Is(err, core.ErrNoRows) {
			t.Fatalf("expected no such workspace from within a transaction, got %v", err)
		}
	}
	for {
		if _, err := store.GetWorkspace(ctx, "acct_none", "ws_none"); !errors.Is(err, core.ErrNoRows) {
			t.Fatalf("expected no such workspace, got %v", err)
		}
		var n int
		err := store.DB().GetContext(ctx, &n, `SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%FROM workspaces w%'`)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("expected the workspace's statement prepared on the pool's connection")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
