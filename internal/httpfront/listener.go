package httpfront

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// lingerFor bounds how long a closing connection waits for the client to stop
// sending. Long enough for a client still uploading to read the answer, short enough
// that a client that never stops cannot hold the connection.
const lingerFor = 2 * time.Second

// lingerBytes bounds what a closing connection reads and discards, so that a client
// sending as fast as loopback allows costs the hub a bounded amount of work. It is more
// than the rest of an upload somewhat over the 20 MiB limit; a client still sending
// after that much has had time to read its answer.
const lingerBytes = 64 << 20

// Listener wraps ln so that closing a connection lets the client read the last answer.
// A request refused before its body was read (a 25 MiB upload: 400 invalid_asset_size)
// leaves the body's bytes arriving; closing a socket with unread input makes the kernel
// send a reset, and a reset that arrives before the client read the answer destroys
// it: the client sees "connection reset by peer" instead of the 400. So Close first
// half-closes (the client reads the answer and then end of stream), then reads and
// discards what the client still sends until it closes its side, lingerFor passes or
// lingerBytes were read, and only then closes the socket (net/http's closeWriteAndWait
// half-closes and waits too). Serve every listener of the hub through it.
func Listener(ln net.Listener) net.Listener { return lingerListener{ln} }

type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, nil
}

type lingerConn struct {
	*net.TCPConn
	once   sync.Once
	err    error
	closed atomic.Bool
}

// Close half-closes at once and lingers in the background: the server's goroutine (and
// a shutdown closing idle connections one by one) does not wait for the client.
func (c *lingerConn) Close() error {
	c.once.Do(func() {
		c.closed.Store(true)
		if err := c.CloseWrite(); err != nil {
			c.err = c.TCPConn.Close()
			return
		}
		go func() {
			_ = c.TCPConn.SetReadDeadline(time.Now().Add(lingerFor))
			_, _ = io.CopyN(io.Discard, c.TCPConn, lingerBytes)
			_ = c.TCPConn.Close()
		}()
	})
	return c.err
}

// The deadlines of a connection the hub closed are moot: fasthttp sets them after a
// handler returns, and panics on an error, which the socket gives once the lingering
// above has ended (the client hung up at once). A handler closes a connection when the
// wait for a request's head timed out (httpfront's error handler).

func (c *lingerConn) SetDeadline(t time.Time) error {
	if c.closed.Load() {
		return nil
	}
	return c.TCPConn.SetDeadline(t)
}

func (c *lingerConn) SetReadDeadline(t time.Time) error {
	if c.closed.Load() {
		return nil
	}
	return c.TCPConn.SetReadDeadline(t)
}

func (c *lingerConn) SetWriteDeadline(t time.Time) error {
	if c.closed.Load() {
		return nil
	}
	return c.TCPConn.SetWriteDeadline(t)
}
