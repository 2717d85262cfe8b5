package web

import (
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/internal/keyrate"
)

// signInLimits are a token bucket per client address for the sign-in routes (1 a
// second and 10 at once unless the options say otherwise): a guess at links or a flood
// of provider round trips from one address is slowed, others are not. The address is
// the one authentication is not yet there to replace: before sign-in, it is all there is.
func signInLimits(perSecond float64, burst int) *keyrate.Buckets {
	if perSecond <= 0 {
		perSecond = 1
	}
	if burst <= 0 {
		burst = 10
	}
	return keyrate.New(perSecond, burst)
}

// limited refuses a sign-in attempt past the address's rate.
func (a *app) limited(c *fiber.Ctx) error {
	if !a.limit.Of(c.IP()).AllowN(a.opts.Now(), 1) {
		c.Set(fiber.HeaderRetryAfter, "1")
		return a.refuse(c, fiber.StatusTooManyRequests, "Too many sign-in attempts from this address. Wait a moment and try again.")
	}
	return c.Next()
}

// bounded spends a token of the signed-in member's bucket. The buckets are the ones
// that bound the API's keys (Options.Requests), so a person driving the account from
// the app is held to what a script with a key is held to; a key and a member each
// have their own bucket.
func (a *app) bounded(c *fiber.Ctx) error {
	if a.requests == nil {
		return c.Next()
	}
	now := a.opts.Now()
	lim := a.requests.Of(sessionOf(c).Member.ID)
	if !lim.AllowN(now, 1) {
		wait := math.Ceil((1 - lim.TokensAt(now)) / float64(lim.Limit()))
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(int(wait), 1)))
		return a.refuse(c, fiber.StatusTooManyRequests, "You are sending more requests than the hub takes from one person; wait a moment and try again.")
	}
	return c.Next()
}
