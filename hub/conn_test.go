package hub_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// Raw-connection tests: what a misbehaving client sends, byte by byte, to a real hub
// listening on loopback.

// shortTimeouts is a hub whose connection timeouts a test can wait out.
func shortTimeouts(t *testing.T, opts ...hubtest.Option) *hubtest.Hub {
	return hubtest.Start(t, append(opts, hubtest.WithConfig(func(c *hub.Config) {
		c.HTTPReadTimeout, c.HTTPWriteTimeout, c.HTTPIdleTimeout = time.Second, time.Second, time.Second
	}))...)
}

func dial(t *testing.T, h *hubtest.Hub) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reads until the server closes the connection, failing after limit.
// It returns what the server sent.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("expected the hub to close the connection within %s, it was still open (read %q)", limit, b)
	}
	return string(b)
}

func TestStalledAndIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	h := shortTimeouts(t)
	tests := []struct{ name, send string }{
		{"a body shorter than its Content-Length", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\":\"x"},
		{"headers never finished (slowloris)", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n"},
		{"nothing sent", ""},
		{"an idle keep-alive connection", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, h)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			closedWithin(t, c, 5*time.Second)
		})
	}
}

func TestManySlowClientsAreAllClosed(t *testing.T) {
	t.Parallel()
	h := shortTimeouts(t)
	var wg sync.WaitGroup
	open := make(chan int, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow-%d: 1\r\n", i)
			_ = c.SetReadDeadline(time.Now().Add(8 * time.Second))
			if _, err := io.ReadAll(c); err != nil {
				open <- i
			}
		}()
	}
	wg.Wait()
	close(open)
	if n := len(open); n > 0 {
		t.Fatalf("expected all 200 slowloris connections closed by the hub, %d were still open after 8 s", n)
	}
	// The hub still answers.
	resp, err := http.Get(h.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("expected the hub to answer after the slow clients, got %v, %v", resp, err)
	}
	resp.Body.Close()
}

// status reads one response's status line from c.
func status(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("expected a response, got %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestMalformedFramingIsRefused(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	auth := "Authorization: Bearer " + h.Key + "\r\n"
	tests := []struct {
		name, send string
		status     int
	}{
		{"conflicting Content-Length", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}", 400},
		{"Content-Length not a number", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\n" + auth +
			"Content-Length: 2x\r\n\r\n{}", 400},
		{"unknown Transfer-Encoding", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\n" + auth +
			"Transfer-Encoding: foo\r\n\r\n{}", 501},
		{"gzip, chunked Transfer-Encoding", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\n" + auth +
			"Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, h)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			if code, body := status(t, c); code != tt.status {
				t.Errorf("expected %d, got %d %s", tt.status, code, body)
			}
		})
	}
}

// uploadOver sends a 25 MiB upload and reads the answer; it reports a connection
// reset instead of an answer as an error.
func uploadOver(h *hubtest.Hub, ws string, chunked bool) (int, string, error) {
	body := bytes.Repeat([]byte("x"), 25<<20)
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length: the client sends it chunked
	}
	req, _ := http.NewRequest("POST", h.URL+"/v1/api/workspaces/"+ws+"/attachments", r)
	req.Header.Set("Authorization", "Bearer "+h.Key)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

func TestOversizedUploadsGetTheirAnswer(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			resets := 0
			for range 10 {
				code, body, err := uploadOver(h, ws, chunked)
				if err != nil {
					resets++
					continue
				}
				if code != 400 || !strings.Contains(body, "invalid_asset_size") {
					t.Fatalf("expected 400 invalid_asset_size, got %d %s", code, body)
				}
			}
			if resets > 0 {
				t.Fatalf("expected every oversized upload to read its 400 answer, %d of 10 got a connection error instead", resets)
			}
		})
	}
}
