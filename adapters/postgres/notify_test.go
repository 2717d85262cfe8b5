package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// TestATransactionsNotificationsAreSentAtCommit: the notifications of a transaction,
// kept until it commits and sent in one statement, arrive as PostgreSQL would deliver
// them one by one: in their order, a repeated one once, and none of a transaction
// rolled back.
func TestATransactionsNotificationsAreSentAtCommit(t *testing.T) {
	store, url := pgtest.NewStore(t)
	l := pq.NewListener(url, time.Second, time.Second, nil)
	t.Cleanup(func() { _ = l.Close() })
	for _, ch := range []string{"a", "b"} {
		if err := l.Listen(ch); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	errRollBack := errors.New("roll back")
	if err := store.InTx(ctx, func(q core.Queries) error {
		if err := q.Notify(ctx, "a", "rolled back"); err != nil {
			return err
		}
		return errRollBack
	}); !errors.Is(err, errRollBack) {
		t.Fatalf("expected the transaction rolled back, got %v", err)
	}
	for _, batch := range [][][2]string{{{"a", "alone"}}, {{"a", "1"}, {"b", "2"}, {"a", "1"}, {"a", "3"}}} {
		if err := store.InTx(ctx, func(q core.Queries) error {
			for _, n := range batch {
				if err := q.Notify(ctx, n[0], n[1]); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range [][2]string{{"a", "alone"}, {"a", "1"}, {"b", "2"}, {"a", "3"}} {
		select {
		case n := <-l.Notify:
			if n == nil || n.Channel != want[0] || n.Extra != want[1] {
				t.Fatalf("expected %s %q, got %+v", want[0], want[1], n)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("expected %s %q, got nothing", want[0], want[1])
		}
	}
	select {
	case n := <-l.Notify:
		t.Errorf("expected nothing more, got %+v", n)
	case <-time.After(200 * time.Millisecond):
	}
}
