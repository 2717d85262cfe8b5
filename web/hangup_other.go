//go:build !unix

package web

import (
	"context"

	"github.com/gofiber/fiber/v2"
)

// untilHangup is the handler's context: this system cannot peek at a socket without
// reading from it (hangup.go), so a client that hangs up is not seen, and the work's
// own deadline bounds it, as it does for a connection that is not a socket.
func untilHangup(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return context.WithCancel(c.UserContext())
}
