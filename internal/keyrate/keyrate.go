// Package keyrate holds a token bucket per caller, named by what authenticated it (an
// API key's id, an app member's id; before sign-in, the client's address), for the
// front-ends' rate limits and the pace of their event streams' own reads.
//
// The buckets are this replica's own, in memory: a shared count in PostgreSQL would
// cost a round trip per request, as much as most requests themselves, to stop a burst
// the database would then have to take anyway.
package keyrate

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Buckets are the buckets of the callers seen lately. Only authenticated callers get
// one, so their number is bounded by the keys and members in the database; idle ones
// are forgotten when the map grows. A nil *Buckets has no limit.
type Buckets struct {
	Limit rate.Limit
	Burst int
	mu    sync.Mutex
	m     map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// sweepAt is the number of buckets past which idle ones are dropped.
const sweepAt = 10_000

// idleFor is how long a bucket is kept unused: long enough to be full again, so that
// forgetting it changes nothing, and at least a minute.
func (b *Buckets) idleFor() time.Duration {
	refill := time.Duration(float64(b.Burst) / float64(b.Limit) * float64(time.Second))
	return max(refill, time.Minute)
}

// New makes buckets of perSecond tokens a second, burst at once (perSecond 0 or less:
// no limit, nil).
func New(perSecond float64, burst int) *Buckets {
	if perSecond <= 0 {
		return nil
	}
	return &Buckets{Limit: rate.Limit(perSecond), Burst: max(burst, 1), m: map[string]*bucket{}}
}

// Of returns the caller's bucket, made full when the caller has none. Callers are ids
// (or an address), never request text: one credential can be spelt many ways.
func (b *Buckets) Of(caller string) *rate.Limiter {
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.m[caller]
	if e == nil {
		if len(b.m) >= sweepAt {
			idle := b.idleFor()
			for id, old := range b.m {
				if now.Sub(old.seen) > idle {
					delete(b.m, id)
				}
			}
		}
		e = &bucket{lim: rate.NewLimiter(b.Limit, b.Burst)}
		b.m[caller] = e
	}
	e.seen = now
	return e.lim
}
