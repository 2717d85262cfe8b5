package jobs

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wshub/wshub/core"
)

// The worker letting go of its claims, on a fake clock with a 30 s lease: when it
// releases, how it retries a release the store refuses, and when it keeps a workspace
// for its next turn.

// quickStep is a claim of a workspace whose one step ends at once with no more work.
func quickStep(f *fakeWorkerCore) {
	f.batches = [][]*core.Workspace{{{ID: "ws_1", State: core.StateQueued, LeaseToken: "token"}}}
	f.step = func(context.Context, *core.Workspace) (bool, error) { return false, nil }
}

func TestAWorkspaceWithNoMoreWorkIsReleasedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{}
		quickStep(f)
		runWorker(t, f)
		time.Sleep(time.Minute) // sleep: fake time under testing/synctest: a minute of the worker
		if got := since(start, f.releasedAt()); !slices.Equal(got, secs(0)) {
			t.Fatalf("expected one release at once, got %v", got)
		}
	})
}

func TestARefusedReleaseIsTriedAgainUntilTheLeaseWouldRunOutByItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{release: func() error { return errUnreachable }}
		quickStep(f)
		runWorker(t, f)
		time.Sleep(time.Minute) // sleep: fake time under testing/synctest: a minute of the worker
		// Backing off from 100 ms, doubling up to 2 s; the last try is the last that
		// leaves its wait inside the lease (30 s from the claim).
		want := secs(0, 0.1, 0.3, 0.7, 1.5, 3.1)
		for at := 5.1; at < 30; at += 2 {
			want = append(want, secs(at)...)
		}
		got := since(start, f.releasedAt())
		if !slices.EqualFunc(got, want, func(a, b time.Duration) bool { return (a - b).Abs() < time.Millisecond }) {
			t.Fatalf("expected releases at\n%v, got\n%v", want, got)
		}
	})
}

func TestAReleaseThatGoesThroughIsNotTriedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var refused atomic.Int32
		f := &fakeWorkerCore{release: func() error {
			if refused.Add(1) <= 2 {
				return errUnreachable
			}
			return nil
		}}
		quickStep(f)
		runWorker(t, f)
		time.Sleep(time.Minute) // sleep: fake time under testing/synctest: a minute of the worker
		if got := since(start, f.releasedAt()); !slices.Equal(got, secs(0, 0.1, 0.3)) {
			t.Fatalf("expected two refused releases then one that went through, got %v", got)
		}
	})
}

func TestARefusedReleaseIsTriedOnceMoreAsTheHubStopsThenGivenUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		f := &fakeWorkerCore{release: func() error { return errUnreachable }}
		quickStep(f)
		w := &Worker{Core: f, Log: quiet, Concurrency: 1, LeaseFor: testLease}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { defer close(ran); w.Run(ctx) }()
		time.Sleep(time.Second) // sleep: fake time under testing/synctest: a second of the worker
		cancel()
		<-ran
		// The last try, at once, may let another replica claim the workspace without
		// waiting for the lease to run out.
		if got := since(start, f.releasedAt()); !slices.Equal(got, secs(0, 0.1, 0.3, 0.7, 1)) {
			t.Fatalf("expected the tries of the first second and one as the hub stopped, got %v", got)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("expected Run to return as the hub stopped, it returned after %s", waited)
		}
	})
}

func TestAWorkspaceKeepsItsSlotForItsNextTurnUnlessAnotherAccountWaits(t *testing.T) {
	for _, otherWaits := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			f := &fakeWorkerCore{yield: otherWaits}
			f.batches = [][]*core.Workspace{{{ID: "ws_1", State: core.StateReady, LeaseToken: "token"}}}
			var turns atomic.Int32
			f.step = func(context.Context, *core.Workspace) (bool, error) {
				// Three messages wait: more after each turn but the last.
				return turns.Add(1) < 3, nil
			}
			runWorker(t, f)
			synctest.Wait()
			want := int32(3)
			if otherWaits {
				want = 1 // let go after its first turn; the claim chooses who is next
			}
			if got := turns.Load(); got != want {
				t.Fatalf("another account waiting: %v; expected %d turns in the claim, got %d", otherWaits, want, got)
			}
			if got := len(f.releasedAt()); got != 1 {
				t.Fatalf("expected the claim released once, got %d", got)
			}
		})
	}
}

func TestTheWorkerClaimsOnANotificationOfTheWorkChannel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, w := &fakeWorkerCore{}, newFakeWaker()
		worker := &Worker{Core: f, Waker: w, Log: quiet, Concurrency: 1, LeaseFor: testLease, Poll: time.Minute}
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { defer close(ran); worker.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-ran })
		synctest.Wait()
		w.notify(core.DeliveryChannel)
		synctest.Wait()
		if got := f.claimed(); got != 1 {
			t.Fatalf("expected only the first claim after another channel's NOTIFY, got %d", got)
		}
		w.notify(core.WorkChannel)
		synctest.Wait()
		if got := f.claimed(); got != 2 {
			t.Fatalf("expected a claim on the work channel's NOTIFY, got %d claims", got)
		}
	})
}
