package hubtest

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/wshub/wshub/hub"
)

// OnHost builds another hub on h's database, a replica on another host: host is its
// WSHUB_HOST_ID, it has a data directory of its own and every role, and opts edit the
// rest of h's configuration (a proxy in front of its database included). It serves
// the API and shares h's tenant; its background work runs while Jobs runs it.
func (h *Hub) OnHost(t testing.TB, host string, opts ...Option) *Hub {
	t.Helper()
	cfg := h.Config
	cfg.HostID, cfg.DataDir, cfg.Roles = host, t.TempDir(), hub.AllRoles
	cfg.AgentCommands = maps.Clone(cfg.AgentCommands)
	cfg.Providers = append([]string(nil), cfg.Providers...)
	var hopt hub.Options
	for _, o := range opts {
		o(&cfg, &hopt)
	}
	other, err := hub.New(cfg, storeVia(t, cfg.DatabaseURL), nil, hopt)
	if err != nil {
		t.Fatalf("build the hub of %s: %v", host, err)
	}
	url := serveAPI(t, other)
	other.SetOwnURL(url)
	if other.Process != nil {
		t.Cleanup(other.Process.Close)
	}
	return &Hub{Hub: other, t: t, URL: url, DBURL: h.DBURL, Account: h.Account, Key: h.Key, Project: h.Project}
}

// Jobs runs the hub's background work (Run, its roles') until stop is called or t
// ends; stop returns once the work has ended (running turns interrupted and recorded,
// heartbeats stopped). Jobs again starts it again.
func (h *Hub) Jobs(t testing.TB) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = h.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-ran
		})
	}
	t.Cleanup(stop)
	return stop
}
