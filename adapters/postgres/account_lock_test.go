package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// Two creates on one account each claim their idempotency key (a receipt row that
// references the account: a KEY SHARE lock on its row) before either locks the
// account for its quota check. The account lock must not wait on those: each
// transaction runs once, neither deadlocked and retried.
func TestCreatesOnOneAccountDoNotDeadlockOnItsRow(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	seedDeliveries(t, store, time.Now(), 0) // account acct_l
	claimed := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var once [2]sync.Once
	var runs [2]atomic.Int32
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			errs[i] = store.InTx(ctx, func(q core.Queries) error {
				runs[i].Add(1)
				if _, _, err := q.ClaimIdempotencyKey(ctx, &core.Receipt{AccountID: "acct_l", Scope: "create",
					Key: fmt.Sprintf("key-%d", i), Fingerprint: []byte{1}, CreatedAt: time.Now()}); err != nil {
					return err
				}
				once[i].Do(func() { close(claimed[i]) })
				<-claimed[1-i] // both hold their receipt's lock on the account
				return q.LockAccount(ctx, "acct_l")
			})
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || runs[i].Load() != 1 {
			t.Errorf("create %d: expected one run and no error, got %d runs (%v)", i, runs[i].Load(), errs[i])
		}
	}
}
