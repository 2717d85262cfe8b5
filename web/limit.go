package web

import (
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"
)

// addrLimits is a token bucket per client address for the sign-in routes: a guess at
// links or a flood of provider round trips from one address is slowed, others are not.
// The buckets are this replica's own, in memory, as the API's are.
type addrLimits struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	seen  map[string]*addrBucket
}

type addrBucket struct {
	lim  *rate.Limiter
	last time.Time
}

// maxAddrBuckets bounds the map; past it, buckets idle for a minute are dropped.
const maxAddrBuckets = 10000

func newAddrLimits(perSecond float64, burst int) *addrLimits {
	if perSecond <= 0 {
		perSecond = 1
	}
	if burst <= 0 {
		burst = 10
	}
	return &addrLimits{limit: rate.Limit(perSecond), burst: burst, seen: map[string]*addrBucket{}}
}

func (l *addrLimits) allow(addr string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.seen[addr]
	if b == nil {
		if len(l.seen) >= maxAddrBuckets {
			for k, v := range l.seen {
				if now.Sub(v.last) > time.Minute {
					delete(l.seen, k)
				}
			}
		}
		b = &addrBucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.seen[addr] = b
	}
	b.last = now
	return b.lim.AllowN(now, 1)
}

// limited refuses a sign-in attempt past the address's rate.
func (a *app) limited(c *fiber.Ctx) error {
	if !a.limit.allow(c.IP(), a.opts.Now()) {
		c.Set(fiber.HeaderRetryAfter, "1")
		return a.refuse(c, fiber.StatusTooManyRequests, "Too many sign-in attempts from this address. Wait a moment and try again.")
	}
	return c.Next()
}
