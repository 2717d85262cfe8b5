package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// rawConn is one keep-alive HTTP/1.1 connection of the load generator, written and
// read by hand. The load shares its CPU with PostgreSQL (PIN=1 puts both on one core,
// as pgbench and PostgreSQL are for the baseline): net/http's client spent more of it
// per request than PostgreSQL did, so the hub's figures measured the generator as
// much as the hub. This one builds a request into a reused buffer and skips the
// response's body by its length: a few microseconds a request.
type rawConn struct {
	addr, host string
	c          net.Conn
	br         *bufio.Reader
	buf        []byte
}

func newRawConn(base string) (*rawConn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("the load generator speaks plain http to loopback, not %q", base)
	}
	return &rawConn{addr: u.Host, host: u.Host}, nil
}

// rawTimeout bounds one request, as the http.Client's timeout did.
const rawTimeout = 30 * time.Second

// do sends q and reads its answer: the body's size and whether the status was 2xx.
// A failed connection is dropped, and the next request dials again.
func (rc *rawConn) do(ctx context.Context, key string, q request) (int, bool, error) {
	n, status, err := rc.roundTrip(ctx, key, q)
	if errors.Is(err, errConnClosed) {
		rc.close()
		return n, status < 300, nil
	}
	if err != nil {
		rc.close()
		return 0, false, err
	}
	return n, status < 300, nil
}

func (rc *rawConn) close() {
	if rc.c != nil {
		_ = rc.c.Close()
		rc.c = nil
	}
}

func (rc *rawConn) roundTrip(ctx context.Context, key string, q request) (n, status int, err error) {
	if rc.c == nil {
		var d net.Dialer
		if rc.c, err = d.DialContext(ctx, "tcp", rc.addr); err != nil {
			return 0, 0, err
		}
		rc.br = bufio.NewReaderSize(rc.c, 64<<10)
	}
	b := append(rc.buf[:0], q.method...)
	b = append(b, ' ')
	b = append(b, q.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, rc.host...)
	b = append(b, "\r\nAuthorization: Bearer "...)
	b = append(b, cmp.Or(q.key, key)...)
	if q.body != "" {
		b = append(b, "\r\nContent-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(q.body)), 10)
	}
	b = append(b, "\r\n\r\n"...)
	b = append(b, q.body...)
	rc.buf = b
	_ = rc.c.SetDeadline(time.Now().Add(rawTimeout))
	if _, err := rc.c.Write(b); err != nil {
		return 0, 0, err
	}
	return readResponse(rc.br)
}

// readResponse reads one response's head and skips its body: by Content-Length, or
// chunk by chunk. A response that says the connection closes is read to its end.
func readResponse(br *bufio.Reader) (n, status int, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, 0, fmt.Errorf("not an HTTP response: %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked, closes := -1, false, false
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, 0, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, _ := bytes.Cut(h, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closes = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case chunked:
		n, err = skipChunks(br)
	case length >= 0:
		n, err = br.Discard(length)
	case closes:
		var m int64
		m, err = io.Copy(io.Discard, br)
		n = int(m)
	}
	if err == nil && closes {
		err = errConnClosed
	}
	return n, status, err
}

// errConnClosed drops a connection the server said it closes; the request succeeded.
var errConnClosed = errors.New("the server closed the connection")

func skipChunks(br *bufio.Reader) (int, error) {
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return total, err
		}
		line, _, _ = bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		size, err := strconv.ParseInt(string(line), 16, 64)
		if err != nil {
			return total, fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, then the blank line
				t, err := br.ReadSlice('\n')
				if err != nil || len(bytes.TrimRight(t, "\r\n")) == 0 {
					return total, err
				}
			}
		}
		m, err := br.Discard(int(size) + 2) // the chunk and its CRLF
		total += max(m-2, 0)
		if err != nil {
			return total, err
		}
	}
}
