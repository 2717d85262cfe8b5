package keyrate

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// A caller has one bucket for as long as it is used, and callers do not share one.
func TestACallerKeepsItsBucketAndOthersHaveTheirOwn(t *testing.T) {
	b := New(0.001, 2)
	now := time.Now()
	for i := range 2 {
		if !b.Of("key_a").AllowN(now, 1) {
			t.Fatalf("token %d of a burst of 2: expected it allowed", i+1)
		}
	}
	if b.Of("key_a").AllowN(now, 1) {
		t.Fatal("expected key_a's third token refused: its bucket is spent")
	}
	if !b.Of("key_b").AllowN(now, 1) {
		t.Fatal("expected key_b's first token allowed: it has a bucket of its own")
	}
}

// No rate is no limit: nil buckets.
func TestNoRateIsNoBuckets(t *testing.T) {
	if b := New(0, 10); b != nil {
		t.Fatalf("expected nil buckets for a rate of 0, got %+v", b)
	}
}

// A bucket is forgotten only once it would be full again, and never within a minute.
func TestABucketIsKeptUntilItIsFullAgain(t *testing.T) {
	for _, tt := range []struct {
		perSecond float64
		burst     int
		want      time.Duration
	}{{100, 200, time.Minute}, {0.01, 3, 300 * time.Second}} {
		if got := New(tt.perSecond, tt.burst).idleFor(); got != tt.want {
			t.Errorf("%v a second, %d at once: expected kept %s, got %s", tt.perSecond, tt.burst, tt.want, got)
		}
	}
}

// In fake time (testing/synctest): a spent bucket refills at its rate, and once the
// map is full, callers idle past idleFor are forgotten while recent ones keep theirs.
func TestBucketsRefillAndIdleOnesAreForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(1, 2)
		allowed := func() (n int) {
			for b.Of("key_a").Allow() {
				n++
			}
			return n
		}
		if n := allowed(); n != 2 {
			t.Fatalf("expected a burst of 2 then a refusal, got %d", n)
		}
		time.Sleep(time.Second) // sleep: fake time under testing/synctest: one token's refill
		if n := allowed(); n != 1 {
			t.Fatalf("expected exactly one token back after a second at 1 a second, got %d", n)
		}

		for i := range sweepAt - 1 {
			b.Of(fmt.Sprintf("idle_%d", i))
		}
		time.Sleep(b.idleFor()) // sleep: fake time under testing/synctest: every bucket but key_a's goes idle
		b.Of("key_a")
		time.Sleep(time.Second) // sleep: fake time under testing/synctest: the others are now idle past idleFor
		b.Of("key_new")
		if len(b.m) != 2 || b.m["key_a"] == nil || b.m["key_new"] == nil {
			t.Fatalf("expected the idle buckets forgotten and key_a's and key_new's kept, got %d buckets", len(b.m))
		}
	})
}
