//go:build unix

package web

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
)

// hangupPoll is how often a page whose work is long looks whether its client is
// still there.
const hangupPoll = 100 * time.Millisecond

// untilHangup is the handler's context, ended also when the client hangs up. fasthttp
// reads nothing from a connection while its handler runs, so it never sees the client
// go, and c.UserContext() is not cancelled: the work of a page nobody waits for would
// go on to its end. This looks at the connection every hangupPoll without taking
// anything from it (MSG_PEEK, which leaves a pipelined request where it is): an end of
// stream or an error means the client is gone. A connection that is not a socket (a
// test's in-memory listener) is not looked at; the work's own deadline bounds it.
func untilHangup(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(c.UserContext())
	rc := rawConn(c.Context().Conn())
	if rc == nil {
		return ctx, cancel
	}
	go func() {
		t := time.NewTicker(hangupPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if hungUp(rc) {
				cancel()
				return
			}
		}
	}()
	return ctx, cancel
}

// rawConn is the socket under c (a TLS connection's too), nil when there is none.
func rawConn(c net.Conn) syscall.RawConn {
	for c != nil {
		switch v := c.(type) {
		case syscall.Conn:
			rc, err := v.SyscallConn()
			if err != nil {
				return nil
			}
			return rc
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}

// hungUp peeks at the socket without waiting: nothing to read yet is a client still
// waiting; an end of stream or an error (a reset) is one gone.
func hungUp(rc syscall.RawConn) bool {
	gone := false
	var b [1]byte
	err := rc.Control(func(fd uintptr) {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = err == nil && n == 0 || err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EINTR)
	})
	return err != nil || gone
}
