package limits_test

import (
	"bufio"
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
	tests := []struct {
		name, send string
		dribble    bool // then keep sending a header byte every 100 ms
		// silent: the hub closes without a word. An answer to a connection that sent
		// nothing would be read by the client as the answer to its next request (Go's
		// client logs "Unsolicited response received on idle HTTP channel").
		silent bool
	}{
		{"a body shorter than its Content-Length", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\":\"x", false, false},
		{"headers never finished (slowloris)", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n", false, false},
		{"headers sent a byte at a time", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ", true, false},
		{"nothing sent", "", false, true},
		{"an idle keep-alive connection", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dial(t, h)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			if tt.dribble {
				done := make(chan struct{})
				defer close(done)
				go func() {
					for {
						select {
						case <-done:
							return
						case <-time.After(100 * time.Millisecond):
						}
						if _, err := io.WriteString(c, "x"); err != nil {
							return
						}
					}
				}()
			}
			// The timeouts are 1 s; 5 s leaves room for a loaded machine.
			if got := closedWithin(t, c, 5*time.Second); tt.silent && got != "" {
				t.Fatalf("expected the connection closed without an answer, got %q", got)
			}
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
	code, body, err := answer(c, 5*time.Second)
	if err != nil {
		t.Fatalf("expected a response, got %v", err)
	}
	return code, body
}

// answer reads one response from c within limit.
func answer(c net.Conn, limit time.Duration) (int, string, error) {
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
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
		{"Transfer-Encoding with Content-Length", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\n" + auth +
			"Transfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 400},
		{"Transfer-Encoding chunked twice", "POST /v1/api/workspaces HTTP/1.1\r\nHost: x\r\n" + auth +
			"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 501},
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

// zeros is an endless body.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

const overLimit = 25 << 20 // an upload 5 MiB over the 20 MiB limit

// clientUpload sends a 25 MiB upload with Go's http.Client (with its Content-Length, or
// chunked) and reads the answer; a connection reset instead of an answer is an error.
func clientUpload(h *hubtest.Hub, ws, key string, chunked bool) (int, string, error) {
	req, _ := http.NewRequest("POST", h.URL+"/v1/api/workspaces/"+ws+"/attachments", io.LimitReader(zeros{}, overLimit))
	req.ContentLength = overLimit
	if chunked {
		req.ContentLength = -1 // unknown: the client sends it chunked
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// rawUpload sends a 25 MiB upload from a raw connection that keeps writing the whole
// body whatever the server does (as a simple client does), while reading the answer.
func rawUpload(h *hubtest.Hub, ws, key string, chunked bool) (int, string, error) {
	c, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	framing := fmt.Sprintf("Content-Length: %d", overLimit)
	if chunked {
		framing = "Transfer-Encoding: chunked"
	}
	auth := ""
	if key != "" {
		auth = "Authorization: Bearer " + key + "\r\n"
	}
	head := fmt.Sprintf("POST /v1/api/workspaces/%s/attachments HTTP/1.1\r\nHost: x\r\n%sContent-Type: text/plain\r\n%s\r\n\r\n", ws, auth, framing)
	if _, err := io.WriteString(c, head); err != nil {
		return 0, "", err
	}
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		piece := make([]byte, 256<<10)
		for sent := 0; sent < overLimit; sent += len(piece) {
			var err error
			if chunked {
				_, err = fmt.Fprintf(c, "%x\r\n%s\r\n", len(piece), piece)
			} else {
				_, err = c.Write(piece)
			}
			if err != nil {
				return // the server stopped reading; a real client notices only now
			}
		}
		if chunked {
			_, _ = io.WriteString(c, "0\r\n\r\n")
		}
	}()
	defer func() { c.Close(); <-wrote }()
	return answer(c, 10*time.Second)
}

// TestOversizedUploadsGetTheirAnswer: an upload over 20 MiB is refused before its body
// is read, and the client reads that answer every time, never a connection reset
// (closing a socket with unread input makes the kernel send one).
func TestOversizedUploadsGetTheirAnswer(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	const attempts = 20
	for _, tt := range []struct {
		name   string
		upload func(h *hubtest.Hub, ws, key string, chunked bool) (int, string, error)
	}{{"http.Client", clientUpload}, {"raw client writing on", rawUpload}} {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s chunked=%v", tt.name, chunked), func(t *testing.T) {
				resets := 0
				var last error
				for range attempts {
					code, body, err := tt.upload(h, ws, h.Key, chunked)
					if err != nil {
						resets, last = resets+1, err
						continue
					}
					if code != 400 || !strings.Contains(body, `"invalid_asset_size"`) {
						t.Fatalf("expected 400 invalid_asset_size, got %d %s", code, body)
					}
				}
				t.Logf("%d of %d attempts read 400 invalid_asset_size, %d got a connection error (last: %v)", attempts-resets, attempts, resets, last)
				if resets > 0 {
					t.Errorf("expected every oversized upload to read its 400 answer, %d of %d got a connection error instead: %v", resets, attempts, last)
				}
			})
		}
	}
}

// TestOversizedChunkedUploadChecksTheKeyFirst: a chunked upload over 20 MiB (no
// Content-Length: the size is known only once 20 MiB have been read) is answered like
// one with a Content-Length: the key first (401), entitlement (403), then 400
// invalid_asset_size.
func TestOversizedChunkedUploadChecksTheKeyFirst(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	_, unentitled := h.NewAccount(false)
	for _, tt := range []struct {
		name, key, code string
		status          int
	}{
		{"no key", "", "missing_api_key", 401},
		{"unknown key", "svc_unknown", "invalid_api_key", 401},
		{"not entitled", unentitled, "cloud_entitlement_required", 403},
		{"valid key", h.Key, "invalid_asset_size", 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body, err := rawUpload(h, ws, tt.key, true)
			if err != nil {
				t.Fatalf("expected an answer, got %v", err)
			}
			if code != tt.status || !strings.Contains(body, `"`+tt.code+`"`) {
				t.Errorf("expected %d %s, got %d %s", tt.status, tt.code, code, body)
			}
		})
	}
	// Chunked framing itself is fine: a small chunked upload is stored.
	code, body, err := rawChunked(h, ws, "hello")
	if err != nil || code != 201 {
		t.Fatalf("expected a small chunked upload to be stored (201), got %d %s %v", code, body, err)
	}
}

// rawChunked sends a small chunked upload and reads the answer.
func rawChunked(h *hubtest.Hub, ws, text string) (int, string, error) {
	c, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /v1/api/workspaces/%s/attachments HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", ws, h.Key, len(text), text)
	if err != nil {
		return 0, "", err
	}
	return answer(c, 10*time.Second)
}
