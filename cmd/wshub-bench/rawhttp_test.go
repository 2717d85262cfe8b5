package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The load generator's hand-made client reads what a real HTTP server writes: a body
// by its length, a chunked one, a 404, a closing response; it keeps its connection
// between requests and sends the key and body it is given.
func TestTheRawClientSpeaksHTTP(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fixed":
			_, _ = io.WriteString(w, "0123456789")
		case "/chunked":
			for range 3 {
				_, _ = io.WriteString(w, strings.Repeat("x", 1000))
				w.(http.Flusher).Flush()
			}
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			if r.Header.Get("Authorization") != "Bearer svc_k" || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, "bad headers", http.StatusBadRequest)
				return
			}
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(body)
		case "/close":
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := newRawConn(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ctx := context.Background()
	for _, tc := range []struct {
		q    request
		n    int
		ok   bool
		conn int32
	}{
		{request{method: "GET", path: "/fixed"}, 10, true, 1},
		{request{method: "GET", path: "/chunked"}, 3000, true, 1},
		{request{method: "POST", path: "/echo", body: `{"a":1}`}, 7, true, 1},
		{request{method: "GET", path: "/missing"}, len("404 page not found\n"), false, 1},
		{request{method: "GET", path: "/close"}, 3, true, 1},
		{request{method: "GET", path: "/fixed"}, 10, true, 2}, // dialled again after the close
	} {
		n, ok, err := c.do(ctx, "svc_k", tc.q)
		if err != nil || n != tc.n || ok != tc.ok || conns.Load() != tc.conn {
			t.Errorf("%s %s: expected %d bytes, ok %v on connection %d; got %d, %v, %v on %d",
				tc.q.method, tc.q.path, tc.n, tc.ok, tc.conn, n, ok, err, conns.Load())
		}
	}
}
