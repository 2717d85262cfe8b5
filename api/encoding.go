package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Encoded reports whether a request's body is content-encoded. Fiber's Ctx.Body
// inflates gzip, deflate and br in memory with no limit: one megabyte of gzip is a
// gigabyte of heap. Every handler that takes a body reads it raw
// (c.Request().Body()), and encoded ones are refused before that.
func Encoded(c *fiber.Ctx) bool {
	enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))
	return enc != "" && !strings.EqualFold(enc, "identity")
}
