package api

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"

	"github.com/wshub/wshub/core"
)

// RateLimit is a token bucket per API key: PerSecond requests a second on average,
// Burst at once. PerSecond 0 turns the limit off.
//
// The buckets are this replica's own, in memory: a shared count in PostgreSQL would
// cost a round trip per request, as much as most requests themselves, to stop a burst
// the database would then have to take anyway. With N replicas behind a balancer a
// key gets up to N times the rate, which the setting allows for.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// keyLimits holds the buckets of the keys seen lately, by key id. Only authenticated
// keys get one, so their number is bounded by the keys in the database; idle ones are
// forgotten when the map grows. The id, not the Authorization text: the scheme's case
// and the spaces around the key may be spelt many ways, and each spelling would
// otherwise get a bucket of its own.
type keyLimits struct {
	limit   rate.Limit
	burst   int
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// sweepAt is the number of buckets past which idle ones are dropped; a bucket idle
// for idleFor is full again, so forgetting it changes nothing.
const (
	sweepAt = 10_000
	idleFor = 10 * time.Minute
)

func newKeyLimits(r RateLimit) *keyLimits {
	if r.PerSecond <= 0 {
		return nil
	}
	return &keyLimits{limit: rate.Limit(r.PerSecond), burst: max(r.Burst, 1), buckets: map[string]*bucket{}}
}

// take spends a token of the key's bucket. It returns false, with how long until a
// token is back, when there is none; either way the headers describe the bucket.
func (k *keyLimits) take(c *fiber.Ctx, keyID string) bool {
	now := time.Now()
	k.mu.Lock()
	b := k.bucket(keyID, now)
	ok := b.lim.AllowN(now, 1)
	left := b.lim.TokensAt(now)
	k.mu.Unlock()

	// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): the policy's
	// quota over the window in which the bucket refills from empty, and what is left.
	window := int(math.Ceil(float64(k.burst) / float64(k.limit)))
	c.Set("RateLimit-Policy", `"key";q=`+strconv.Itoa(k.burst)+";w="+strconv.Itoa(window))
	untilOne := 0
	if left < 1 {
		untilOne = int(math.Ceil((1 - left) / float64(k.limit)))
	}
	c.Set("RateLimit", `"key";r=`+strconv.Itoa(max(int(left), 0))+";t="+strconv.Itoa(untilOne))
	if !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(untilOne, 1)))
	}
	return ok
}

// bucket returns the key's bucket, made full when the key has none; k.mu is held.
func (k *keyLimits) bucket(keyID string, now time.Time) *bucket {
	b := k.buckets[keyID]
	if b == nil {
		if len(k.buckets) >= sweepAt {
			for key, old := range k.buckets {
				if now.Sub(old.seen) > idleFor {
					delete(k.buckets, key)
				}
			}
		}
		b = &bucket{lim: rate.NewLimiter(k.limit, k.burst)}
		k.buckets[keyID] = b
	}
	b.seen = now
	return b
}

// pacer returns the key's bucket as the pace of its event streams' own page reads
// (nil: no pacing). The bucket outlives the streams, so closing and opening streams
// does not fill it again.
func (k *keyLimits) pacer(keyID string) core.Pacer {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bucket(keyID, time.Now()).lim
}

// errRateLimited is the answer past the limit.
func errRateLimited(c *fiber.Ctx) error {
	return core.Errorf(core.CodeRateLimited, "this key sends more requests than the hub takes (see RateLimit-Policy); retry after %s seconds",
		string(c.Response().Header.Peek(fiber.HeaderRetryAfter)))
}
