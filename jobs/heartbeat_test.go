package jobs

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wshub/wshub/core"
)

// The heartbeat of a claim, on a fake clock with a 30 s lease (renewed every 10 s):
// when it gives the claim up, and when it stops the turn in progress.

const testLease = 30 * time.Second

var errUnreachable = errors.New("store unreachable")

// ended is how and when a step's context ended.
type ended struct {
	after time.Duration // since the claim
	cause error
}

// runWorker runs a worker with one slot and a 30 s lease on f in t's bubble until t
// ends.
func runWorker(t *testing.T, f *fakeWorkerCore) {
	w := &Worker{Core: f, Log: quiet, Concurrency: 1, LeaseFor: testLease, Poll: 2 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
}

// aTurn is a claim of a ready workspace whose turn runs until its context ends,
// reported on the returned channel.
func aTurn(f *fakeWorkerCore) <-chan ended {
	start := time.Now()
	out := make(chan ended, 1)
	f.batches = [][]*core.Workspace{{{ID: "ws_1", State: core.StateReady, LeaseToken: "token"}}}
	f.step = func(ctx context.Context, _ *core.Workspace) (bool, error) {
		<-ctx.Done()
		out <- ended{time.Since(start), context.Cause(ctx)}
		return false, context.Cause(ctx)
	}
	return out
}

func since(start time.Time, ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(start)
	}
	return out
}

func secs(s ...float64) []time.Duration {
	out := make([]time.Duration, len(s))
	for i, v := range s {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

func TestALeaseWhoseRenewalsFailForAWholeLeaseIsLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{renew: func(context.Context) (core.WorkspaceState, bool, error) { return "", false, errUnreachable }}
		turn := aTurn(f)
		runWorker(t, f)
		e := <-turn
		if e.after != testLease || !errors.Is(e.cause, core.ErrLeaseLost) {
			t.Fatalf("expected the turn ended by the lease lost after %s, got %v after %s", testLease, e.cause, e.after)
		}
		synctest.Wait()
		if got := since(start, f.renewedAt()); !slices.Equal(got, secs(10, 20, 30)) {
			t.Fatalf("expected renewals at 10, 20 and 30 s, got %v", got)
		}
		if got := f.releasedAt(); len(got) != 0 {
			t.Fatalf("expected a lost lease not released (another claim may hold it), got releases at %v", since(start, got))
		}
	})
}

func TestALeaseWhoseRenewalsHangIsLostAfterOneLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeWorkerCore{renew: func(ctx context.Context) (core.WorkspaceState, bool, error) {
			<-ctx.Done() // a connection that never answers: each renewal is cut after 10 s
			return "", false, ctx.Err()
		}}
		turn := aTurn(f)
		runWorker(t, f)
		if e := <-turn; e.after != testLease || !errors.Is(e.cause, core.ErrLeaseLost) {
			t.Fatalf("expected the turn ended by the lease lost after %s, got %v after %s", testLease, e.cause, e.after)
		}
	})
}

func TestALeaseCountsFromTheLastRenewalThatWentThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{renew: func(context.Context) (core.WorkspaceState, bool, error) {
			if time.Since(start) == 30*time.Second {
				return core.StateReady, true, nil
			}
			return "", false, errUnreachable
		}}
		turn := aTurn(f)
		runWorker(t, f)
		if e := <-turn; e.after != 60*time.Second || !errors.Is(e.cause, core.ErrLeaseLost) {
			t.Fatalf("expected the lease lost a whole lease after the renewal at 30 s, got %v after %s", e.cause, e.after)
		}
	})
}

func TestALeaseAnotherClaimTookEndsTheTurnAtTheNextRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{renew: func(context.Context) (core.WorkspaceState, bool, error) { return core.StateReady, false, nil }}
		turn := aTurn(f)
		runWorker(t, f)
		if e := <-turn; e.after != 10*time.Second || !errors.Is(e.cause, core.ErrLeaseLost) {
			t.Fatalf("expected the lease lost at the first renewal (10 s), got %v after %s", e.cause, e.after)
		}
		synctest.Wait()
		if got := f.releasedAt(); len(got) != 0 {
			t.Fatalf("expected a lease another claim holds not released, got releases at %v", since(start, got))
		}
	})
}

func TestATurnWhoseWorkspaceMovedOnIsStoppedAndTheClaimReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		// An operator paused the workspace: the renewal goes through and says so.
		f := &fakeWorkerCore{renew: func(context.Context) (core.WorkspaceState, bool, error) { return core.StatePausing, true, nil }}
		turn := aTurn(f)
		runWorker(t, f)
		if e := <-turn; e.after != 10*time.Second || !errors.Is(e.cause, errWorkspaceMoved) {
			t.Fatalf("expected the turn stopped at the first renewal (10 s) as the workspace moved on, got %v after %s", e.cause, e.after)
		}
		synctest.Wait()
		if got := since(start, f.releasedAt()); !slices.Equal(got, secs(10)) {
			t.Fatalf("expected the claim released at once (10 s), got %v", got)
		}
	})
}

func TestAStepThatIsNotATurnGoesOnWhateverStateTheRenewalReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{renew: func(context.Context) (core.WorkspaceState, bool, error) { return core.StatePausing, true, nil }}
		f.batches = [][]*core.Workspace{{{ID: "ws_1", State: core.StateProvisioning, LeaseToken: "token"}}}
		done := make(chan error, 1)
		f.step = func(ctx context.Context, _ *core.Workspace) (bool, error) {
			select {
			case <-ctx.Done(): // not expected
			case <-time.After(35 * time.Second): // a slow provisioning
			}
			done <- context.Cause(ctx)
			return false, nil
		}
		runWorker(t, f)
		if err := <-done; err != nil {
			t.Fatalf("expected the provisioning step to run to its end, it was stopped: %v", err)
		}
		synctest.Wait()
		if got := since(start, f.renewedAt()); !slices.Equal(got, secs(10, 20, 30)) {
			t.Fatalf("expected renewals at 10, 20 and 30 s, got %v", got)
		}
		if got := since(start, f.releasedAt()); !slices.Equal(got, secs(35)) {
			t.Fatalf("expected the claim released when the step ended (35 s), got %v", got)
		}
	})
}
