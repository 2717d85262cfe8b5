package webhooks_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/webhooks"
	"github.com/wshub/wshub/core"
)

const testSecret = "whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ"

var testBody = []byte(`{"eventId":"evt_1","type":"workspace.turn.completed","reply":{"text":"héllo \u2028 \"q\"","truncated":false}}`)

func newSender(t *testing.T, opts webhooks.Options) *webhooks.Sender {
	t.Helper()
	s := webhooks.New(opts)
	t.Cleanup(s.CloseIdleConnections)
	return s
}

func attempt(url string) core.WebhookAttempt {
	return core.WebhookAttempt{URL: url, Secret: testSecret, EventID: "evt_1", Attempt: 3, Body: testBody}
}

// received is what a test receiver saw of one request.
type received struct {
	header http.Header
	body   []byte
}

func TestSendHeadersAndSignature(t *testing.T) {
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Header.Clone(), b}
	}))
	defer srv.Close()

	before := time.Now()
	res := newSender(t, webhooks.Options{AllowInsecure: true}).Send(context.Background(), attempt(srv.URL+"/hook"))
	if !res.Acknowledged() || res.StatusCode != 200 {
		t.Fatalf("expected acknowledged 200, got %+v", res)
	}
	r := <-got
	if string(r.body) != string(testBody) {
		t.Errorf("body: expected %q, got %q", testBody, r.body)
	}
	want := map[string]string{
		"Service-Event-Id":         "evt_1",
		"Service-Delivery-Attempt": "3",
		"User-Agent":               "service-webhooks/1",
		"Content-Type":             "application/json",
		"Content-Length":           strconv.Itoa(len(testBody)),
	}
	for k, v := range want {
		if g := r.header.Values(k); len(g) != 1 || g[0] != v {
			t.Errorf("header %s: expected [%s], got %q", k, v, g)
		}
	}
	var extra []string
	for k := range r.header {
		if _, ok := want[k]; !ok && k != "Service-Signature" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		t.Errorf("expected no other headers, got %v", extra)
	}

	ts, v1 := parseSignature(t, r.header.Get("service-signature"))
	if d := time.Unix(ts, 0).Sub(before); d < -time.Second || d > time.Second {
		t.Errorf("t: expected within a second of %d, got %d", before.Unix(), ts)
	}
	if want := hmacHex(testSecret, strconv.FormatInt(ts, 10)+"."+string(testBody)); !hmac.Equal([]byte(v1), []byte(want)) {
		t.Errorf("v1: expected %s, got %s", want, v1)
	}
}

func TestSendUsesClock(t *testing.T) {
	fixed := time.Unix(1_700_000_000, 0)
	sigs := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sigs <- r.Header.Get("service-signature")
	}))
	defer srv.Close()

	s := newSender(t, webhooks.Options{AllowInsecure: true, Now: func() time.Time { return fixed }})
	if res := s.Send(context.Background(), attempt(srv.URL)); !res.Acknowledged() {
		t.Fatalf("expected acknowledged, got %+v", res)
	}
	want := "t=1700000000,v1=" + hmacHex(testSecret, "1700000000."+string(testBody))
	if got := <-sigs; got != want {
		t.Errorf("signature: expected %s, got %s", want, got)
	}
}

func TestSendStatuses(t *testing.T) {
	var otherHit atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) { otherHit.Store(true) })
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		if code == http.StatusFound {
			w.Header().Set("Location", "/other")
		}
		w.WriteHeader(code)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := newSender(t, webhooks.Options{AllowInsecure: true})

	for _, tc := range []struct {
		code    int
		wantErr string
	}{
		{200, ""}, {201, ""}, {204, ""}, {299, ""},
		{300, "HTTP 300"},
		{302, "redirect (302) not followed"},
		{400, "HTTP 400"}, {410, "HTTP 410"}, {500, "HTTP 500"},
	} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			res := s.Send(context.Background(), attempt(fmt.Sprintf("%s/status/%d", srv.URL, tc.code)))
			if res.StatusCode != tc.code || res.Error != tc.wantErr {
				t.Errorf("expected {StatusCode:%d Error:%q}, got %+v", tc.code, tc.wantErr, res)
			}
			if res.Acknowledged() != (tc.wantErr == "") {
				t.Errorf("Acknowledged: expected %v, got %v", tc.wantErr == "", res.Acknowledged())
			}
		})
	}
	if otherHit.Load() {
		t.Error("expected the redirect target not to be requested, got a request")
	}
}

func TestSendTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()

	s := newSender(t, webhooks.Options{AllowInsecure: true, Timeout: 200 * time.Millisecond})
	start := time.Now()
	res := s.Send(context.Background(), attempt(srv.URL))
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("expected Send to return within 2s, took %v", took)
	}
	if res.Error != "timed out after 200ms" || res.StatusCode != 0 {
		t.Errorf(`expected {StatusCode:0 Error:"timed out after 200ms"}, got %+v`, res)
	}
}

func TestSendConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	res := newSender(t, webhooks.Options{AllowInsecure: true}).Send(context.Background(), attempt("http://"+addr+"/hook"))
	if res.Error != "connection refused" || res.StatusCode != 0 {
		t.Errorf(`expected {StatusCode:0 Error:"connection refused"}, got %+v`, res)
	}
}

func TestSendCanceled(t *testing.T) {
	var hits atomic.Int32
	entered := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		entered <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	s := newSender(t, webhooks.Options{AllowInsecure: true})

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res := s.Send(ctx, attempt(srv.URL))
		if res.Error != "canceled: hub stopping" || res.StatusCode != 0 {
			t.Errorf(`expected {StatusCode:0 Error:"canceled: hub stopping"}, got %+v`, res)
		}
		if n := hits.Load(); n != 0 {
			t.Errorf("expected no request at the receiver, got %d", n)
		}
	})
	t.Run("while", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-entered; cancel() }()
		start := time.Now()
		res := s.Send(ctx, attempt(srv.URL))
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("expected Send to return within 2s of cancel, took %v", took)
		}
		if res.Error != "canceled: hub stopping" || res.StatusCode != 0 {
			t.Errorf(`expected {StatusCode:0 Error:"canceled: hub stopping"}, got %+v`, res)
		}
	})
}

func TestSendOverTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	res := newSender(t, webhooks.Options{AllowInsecure: true, TLSConfig: &tls.Config{RootCAs: pool}}).
		Send(context.Background(), attempt(srv.URL))
	if !res.Acknowledged() || res.StatusCode != 200 {
		t.Errorf("with the test CA: expected acknowledged 200, got %+v", res)
	}

	// Verification stays on: system roots do not know httptest's CA.
	res = newSender(t, webhooks.Options{AllowInsecure: true}).Send(context.Background(), attempt(srv.URL))
	if want := "TLS certificate not trusted (unknown authority)"; res.Error != want {
		t.Errorf("with system roots: expected %q, got %+v", want, res)
	}
}

// The pool is reused across attempts, and a large response does not hold an attempt up.
func TestSendReusesConnections(t *testing.T) {
	var conns atomic.Int32
	big := strings.Repeat("x", 1<<20)
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, strings.Repeat("y", 10<<10)) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, big) })
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := newSender(t, webhooks.Options{AllowInsecure: true})

	for i := range 3 {
		if res := s.Send(context.Background(), attempt(srv.URL+"/small")); !res.Acknowledged() {
			t.Fatalf("attempt %d: expected acknowledged, got %+v", i, res)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("expected 1 connection for 3 attempts, got %d", n)
	}
	if res := s.Send(context.Background(), attempt(srv.URL+"/big")); !res.Acknowledged() {
		t.Errorf("1 MiB response: expected acknowledged, got %+v", res)
	}
}

func TestSendConcurrent(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	s := newSender(t, webhooks.Options{AllowInsecure: true})

	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if res := s.Send(context.Background(), attempt(srv.URL)); !res.Acknowledged() {
				t.Errorf("expected acknowledged, got %+v", res)
			}
		})
	}
	wg.Wait()
	if n := hits.Load(); n != 32 {
		t.Errorf("expected 32 requests, got %d", n)
	}
}

func TestSecureRefusesBeforeConnecting(t *testing.T) {
	ln := silentListener(t)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	s := newSender(t, webhooks.Options{})

	for _, tc := range []struct {
		url     string
		wantErr *regexp.Regexp
	}{
		{"http://127.0.0.1:" + port + "/hook", regexp.MustCompile(`^http targets are not allowed$`)},
		{"http://hooks.example.com/hook", regexp.MustCompile(`^http targets are not allowed$`)},
		{"ftp://127.0.0.1:" + port + "/hook", regexp.MustCompile(`^only https targets are allowed$`)},
		// Refused by the dial check, after resolution and before connect.
		{"https://127.0.0.1:" + port + "/hook", regexp.MustCompile(`^address 127\.0\.0\.1 is not allowed$`)},
		{"https://localhost:" + port + "/hook", regexp.MustCompile(`^address (127\.0\.0\.1|::1) is not allowed$`)},
	} {
		t.Run(tc.url, func(t *testing.T) {
			res := s.Send(context.Background(), attempt(tc.url))
			if !tc.wantErr.MatchString(res.Error) || res.StatusCode != 0 {
				t.Errorf("expected StatusCode 0 and Error matching %s, got %+v", tc.wantErr, res)
			}
		})
	}
	assertNoConnection(t, ln)
}

// silentListener listens on loopback and never accepts on its own.
func silentListener(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener)
}

// assertNoConnection fails if any connection reached ln. A connection made by a Send
// that has returned is already in the accept queue, so a short wait is enough.
func assertNoConnection(t *testing.T, ln *net.TCPListener) {
	t.Helper()
	ln.SetDeadline(time.Now().Add(100 * time.Millisecond))
	c, err := ln.Accept()
	if err == nil {
		c.Close()
		t.Fatalf("expected no connection at the receiver, got one from %s", c.RemoteAddr())
	}
	if ne, ok := errors.AsType[net.Error](err); !ok || !ne.Timeout() {
		t.Fatalf("expected an accept timeout, got %v", err)
	}
}

func parseSignature(t *testing.T, h string) (int64, string) {
	t.Helper()
	parts := strings.Split(h, ",")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "t=") || !strings.HasPrefix(parts[1], "v1=") {
		t.Fatalf(`signature: expected "t=<unix>,v1=<hex>", got %q`, h)
	}
	ts, err := strconv.ParseInt(parts[0][2:], 10, 64)
	if err != nil {
		t.Fatalf("signature t: expected an integer, got %q", parts[0][2:])
	}
	v1 := parts[1][3:]
	if _, err := hex.DecodeString(v1); err != nil || len(v1) != 64 || strings.ToLower(v1) != v1 {
		t.Fatalf("signature v1: expected 64 lowercase hex digits, got %q", v1)
	}
	return ts, v1
}

func hmacHex(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// The delivery log keeps the start of the receiver's answer and how long the attempt
// took, whatever the status; the rest of the body is drained, not kept.
func TestSendKeepsAnExcerptAndTheDuration(t *testing.T) {
	body := strings.Repeat("x", core.MaxAttemptExcerptBytes-2) + "étrange" + strings.Repeat("y", 1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, body)
	}))
	defer srv.Close()
	res := newSender(t, webhooks.Options{AllowInsecure: true}).Send(context.Background(), attempt(srv.URL))
	if res.StatusCode != 500 || string(res.Excerpt) != body[:core.MaxAttemptExcerptBytes] {
		t.Errorf("expected 500 with the body's first %d bytes, got %d with %d bytes", core.MaxAttemptExcerptBytes, res.StatusCode, len(res.Excerpt))
	}
	if res.Duration <= 0 {
		t.Errorf("expected a positive duration, got %s", res.Duration)
	}
}
