package core

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"testing"
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
