package hubtest

import (
	"net"
	"testing"
	"time"

	"github.com/wshub/wshub/api"
	"github.com/wshub/wshub/hub"
)

// Beside starts another hub on h's database and data directory, its configuration
// edited by edit: a replica, or the same hub restarted with new settings (a rotated
// content key). It serves the API and runs no jobs; it shares h's tenant.
func (h *Hub) Beside(t testing.TB, edit func(*hub.Config)) *Hub {
	t.Helper()
	cfg := h.Config
	cfg.MaxActiveWorkspaces = 0
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
	go func() { _ = h.App.Listener(api.Listener(ln)) }()
	t.Cleanup(func() { _ = h.App.ShutdownWithTimeout(5 * time.Second) })
	return "http://" + ln.Addr().String()
}
