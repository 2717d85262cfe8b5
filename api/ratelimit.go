package api

import (
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/keyrate"
)

// keyLimits are the keys' buckets, by key id: the scheme's case and the spaces around
// the key may be spelt many ways, and each spelling would otherwise get a bucket of its
// own. The buckets may be shared with the app, whose members take theirs by member id.
type keyLimits struct{ *keyrate.Buckets }

func newKeyLimits(b *keyrate.Buckets) *keyLimits {
	if b == nil {
		return nil
	}
	return &keyLimits{b}
}

// take spends a token of the key's bucket. It returns false, with how long until a
// token is back, when there is none; either way the headers describe the bucket.
func (k *keyLimits) take(c *fiber.Ctx, keyID string) bool {
	now := time.Now()
	lim := k.Of(keyID)
	ok := lim.AllowN(now, 1)
	left := lim.TokensAt(now)

	// The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers): the policy's
	// quota over the window in which the bucket refills from empty, and what is left.
	window := int(math.Ceil(float64(k.Burst) / float64(k.Limit)))
	c.Set("RateLimit-Policy", `"key";q=`+strconv.Itoa(k.Burst)+";w="+strconv.Itoa(window))
	untilOne := 0
	if left < 1 {
		untilOne = int(math.Ceil((1 - left) / float64(k.Limit)))
	}
	c.Set("RateLimit", `"key";r=`+strconv.Itoa(max(int(left), 0))+";t="+strconv.Itoa(untilOne))
	if !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(untilOne, 1)))
	}
	return ok
}

// pacer returns the key's bucket as the pace of its event streams' own page reads
// (nil: no pacing). The bucket outlives the streams, so closing and opening streams
// does not fill it again.
func (k *keyLimits) pacer(keyID string) core.Pacer {
	if k == nil {
		return nil
	}
	return k.Of(keyID)
}

// errRateLimited is the answer past the limit.
func errRateLimited(c *fiber.Ctx) error {
	return core.Errorf(core.CodeRateLimited, "this key sends more requests than the hub takes (see RateLimit-Policy); retry after %s seconds",
		string(c.Response().Header.Peek(fiber.HeaderRetryAfter)))
}
