package hubtest

import (
	"context"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/internal/httpfront"
)

// Beside starts another hub on h's database and data directory, its configuration
// edited by edit: a replica, or the same hub restarted with new settings (a rotated
// content key). It serves the API and runs no jobs; it shares h's tenant.
func (h *Hub) Beside(t testing.TB, edit func(*hub.Config)) *Hub {
	t.Helper()
	cfg := h.Config
	cfg.Roles = nil
	if edit != nil {
		edit(&cfg)
	}
	other, err := hub.New(cfg, storeVia(t, h.DBURL), nil, hub.Options{Admin: true})
	if err != nil {
		t.Fatalf("build a hub beside: %v", err)
	}
	return &Hub{Hub: other, t: t, URL: serveAPI(t, other), DBURL: h.DBURL,
		Account: h.Account, Key: h.Key, Project: h.Project}
}

// serveAPI serves h's API on a loopback port until t ends (cleanups run last-in
// first-out: the listener stops after the jobs registered later) and returns its URL.
func serveAPI(t testing.TB, h *hub.Hub) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	go func() { _ = h.App.Listener(httpfront.Listener(ln)) }()
	// Streams end first, as serve ends them: the shutdown would wait out their lifetime.
	t.Cleanup(func() { h.EndStreams(); _ = h.App.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}

// serveMetrics serves h's metrics listener (as WSHUB_METRICS_ADDR would) on a free
// loopback port until t ends, and returns its base URL.
func serveMetrics(t testing.TB, h *hub.Hub) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = h.MetricsServer()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// Replica starts a second full hub on h's database and data directory: it serves the
// API and runs every background job (worker, deliveries, sweeps) with h's
// configuration, as a second replica of a deployment does. It stops when t ends.
func (h *Hub) Replica(t testing.TB) *Hub {
	t.Helper()
	return h.ReplicaWith(t, nil)
}

// ReplicaWith is Replica with h's configuration changed by edit: a replica on another
// host has a data directory and a host id (HostID) of its own.
func (h *Hub) ReplicaWith(t testing.TB, edit func(*hub.Config)) *Hub {
	t.Helper()
	cfg := h.Config
	if edit != nil {
		edit(&cfg)
	}
	other, err := hub.New(cfg, storeVia(t, h.DBURL), nil, hub.Options{})
	if err != nil {
		t.Fatalf("build a replica: %v", err)
	}
	url := serveAPI(t, other)
	other.SetOwnURL(url)
	if other.Process != nil {
		t.Cleanup(other.Process.Close)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = other.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-ran
	})
	return &Hub{Hub: other, t: t, URL: url, MetricsURL: serveMetrics(t, other), DBURL: h.DBURL, Account: h.Account, Key: h.Key, Project: h.Project}
}
