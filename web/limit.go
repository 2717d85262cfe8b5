package web

import (
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
