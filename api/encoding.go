package api

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// Encoded reports whether a request's body is content-encoded. Fiber's Ctx.Body
// inflates gzip, deflate and br in memory with no limit: one megabyte of gzip is a
// gigabyte of heap. Every handler that takes a body reads it raw
// (c.Request().Body()), and encoded ones are refused before that.
func Encoded(c *fiber.Ctx) bool {
	enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))
	return enc != "" && !strings.EqualFold(enc, "identity")
}

// refuseEncoded runs first on every request outside /v1/api (Slack's and Discord's
// endpoints, health, unknown paths) and answers 415 to an encoded body before any
// handler, signature check included, can touch it. /v1/api refuses encoded bodies
// itself, after authentication, with the codes api.md documents (requestBody).
func (s *server) refuseEncoded(c *fiber.Ctx) error {
	if Encoded(c) && !strings.HasPrefix(c.Path(), prefix) {
		return writeError(c, s.log, core.Errorf(core.CodeUnsupportedContentEncoding, "Content-Encoding is not supported; send the body unencoded"))
	}
	return c.Next()
}
