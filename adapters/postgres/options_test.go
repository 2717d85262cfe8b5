package postgres_test

import (
	"context"
	"errors"
	neturl "net/url"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// The lock timeout is every connection's setting: a transaction that waits for a row
// another holds gives up after it with ErrContended (the 503 the use cases answer),
// and a URL's own lock_timeout wins over the option.
func TestLockTimeoutIsEveryConnections(t *testing.T) {
	ctx := context.Background()
	_, url := pgtest.NewStore(t)
	store, err := postgres.Open(ctx, url, postgres.Options{LockTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	acct := &core.Account{ID: "acct_locktimeout", Name: "lock", CreatedAt: time.Now()}
	if err := store.CreateAccount(ctx, acct); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- store.InTx(ctx, func(q core.Queries) error {
			if err := q.LockAccount(ctx, acct.ID); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	start := time.Now()
	err = store.InTx(ctx, func(q core.Queries) error { return q.LockAccount(ctx, acct.ID) })
	waited := time.Since(start)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, core.ErrContended) {
		t.Fatalf("expected ErrContended while the row is held, got %v", err)
	}
	if waited < 250*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("expected to give up after about 300 ms, gave up after %s", waited)
	}
	own, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	q := own.Query()
	q.Set("lock_timeout", "1234")
	own.RawQuery = q.Encode()
	for _, c := range []struct {
		url  string
		want string
	}{{url, "300ms"}, {own.String(), "1234ms"}} {
		s, err := postgres.Open(ctx, c.url, postgres.Options{LockTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := s.DB().GetContext(ctx, &got, "SHOW lock_timeout"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if got != c.want {
			t.Errorf("lock_timeout with %s: expected %s, got %s", c.url, c.want, got)
		}
	}
}
