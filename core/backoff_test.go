package core

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestBackoff(t *testing.T) {
	b := Backoff{First: 2 * time.Second, Max: 10 * time.Second}
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 4: 10 * time.Second, 40: 10 * time.Second} {
		if got := b.Delay(n, rand.Reader); got != want {
			t.Errorf("attempt %d without jitter: expected %s, got %s", n, want, got)
		}
	}
	// api.md 6.4: 30 s doubling to one hour, exactly.
	for n, want := range map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 7: 32 * time.Minute, 8: time.Hour, 19: time.Hour} {
		if got := RetryDelay(n); got != want {
			t.Errorf("RetryDelay(%d): expected %s, got %s", n, want, got)
		}
	}
	// Jitter: within [d*(1-j), d], and not all equal.
	b.Jitter = 0.2
	seen := map[time.Duration]bool{}
	for range 200 {
		d := b.Delay(3, rand.Reader)
		if d > 8*time.Second || d < time.Duration(0.8*float64(8*time.Second)) {
			t.Fatalf("jittered delay %s outside [6.4s, 8s]", d)
		}
		seen[d] = true
	}
	if len(seen) < 50 {
		t.Errorf("expected the jitter to spread the delays, got %d distinct values of 200", len(seen))
	}
	// A source that runs dry gives the exact delay rather than none.
	if got := b.Delay(1, bytes.NewReader(nil)); got != 2*time.Second {
		t.Errorf("exhausted random: expected 2s, got %s", got)
	}
}

// A retry loop's wait ends with its context, not after the delay.
func TestBackoffWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := (Backoff{First: time.Hour, Max: time.Hour}).Wait(ctx, 1, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("expected the wait cut short by its context, got %v", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("expected the wait to end with its context, it took %s", took)
	}
	if err := (Backoff{First: time.Microsecond, Max: time.Microsecond}).Wait(context.Background(), 1, nil); err != nil {
		t.Fatalf("expected a wait that runs its course to return nil, got %v", err)
	}
}

// In fake time (no process involved, so testing/synctest): a wait lasts its attempt's
// delay exactly, and one cut short ends the moment its context does, not at the delay.
func TestBackoffWaitLastsItsDelayOrUntilItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := Backoff{First: 30 * time.Second, Max: time.Hour}
		start := time.Now()
		if err := b.Wait(context.Background(), 3, nil); err != nil || time.Since(start) != 2*time.Minute {
			t.Fatalf("expected the third attempt's wait of 2m0s, got %s (%v)", time.Since(start), err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(45 * time.Second) // sleep: fake time under testing/synctest: the cancellation comes mid-wait
			cancel()
		}()
		start = time.Now()
		if err := b.Wait(ctx, 8, nil); !errors.Is(err, context.Canceled) || time.Since(start) != 45*time.Second {
			t.Fatalf("expected an hour's wait cut at 45s by its context, got %s (%v)", time.Since(start), err)
		}
	})
}
