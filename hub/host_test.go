package hub_test

import (
	"os"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
)

// WSHUB_HOST_ID names the hub's host, the hostname unless set: letters, digits, '.',
// '-' and '_', at most 63. Anything else stops the hub at start, saying why.
func TestHostSettingsAreCheckedAtStart(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("WSHUB_HOST_ID", "")
	os.Unsetenv("WSHUB_HOST_ID")
	if c, err := hub.LoadConfig(); err != nil || c.HostID != hostname {
		t.Fatalf("expected the hostname %q by default, got %q (%v)", hostname, c.HostID, err)
	}
	for _, tc := range []struct {
		id      string
		refused string // "" accepted
	}{
		{"hub-a.example_1", ""},
		{strings.Repeat("h", 63), ""},
		{strings.Repeat("h", 64), `WSHUB_HOST_ID "` + strings.Repeat("h", 64) + `": a host id has at most 63 characters, not 64`},
		{"hub a", `WSHUB_HOST_ID "hub a": a host id has letters, digits, '.', '-' and '_' only, not ' '`},
		{"hub/a", `not '/'`},
		{"hüb", `not 'ü'`},
	} {
		t.Setenv("WSHUB_HOST_ID", tc.id)
		c, err := hub.LoadConfig()
		switch {
		case tc.refused == "" && (err != nil || c.HostID != tc.id):
			t.Errorf("%q: expected accepted, got %q (%v)", tc.id, c.HostID, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%q: expected refused with %q, got %v", tc.id, tc.refused, err)
		}
	}
}

// A Config built in code gets the hostname when it names no host, and the same checks
// when it does.
func TestHostSettingsOfAConfigBuiltInCode(t *testing.T) {
	store, dbURL := pgtest.NewStore(t)
	base := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}}
	h, err := hub.New(base, store, nil, hub.Options{Admin: true})
	if err != nil || h.Config.HostID == "" {
		t.Fatalf("expected the hostname, got %q (%v)", h.Config.HostID, err)
	}
	for _, c := range []struct {
		edit    func(*hub.Config)
		refused string
	}{
		{func(c *hub.Config) { c.HostID = "hub:a" }, `WSHUB_HOST_ID "hub:a"`},
	} {
		cfg := base
		c.edit(&cfg)
		if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), c.refused) {
			t.Errorf("expected refused with %q, got %v", c.refused, err)
		}
	}
}
