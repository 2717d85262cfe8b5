package hub_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
)

// WSHUB_HOST_ID names the hub's host, the hostname unless set: letters, digits, '.',
// '-' and '_', at most 63. WSHUB_HOST_LOST_AFTER is at least three
// WSHUB_HOST_HEARTBEAT periods. Anything else stops the hub at start, saying why.
func TestHostSettingsAreCheckedAtStart(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"WSHUB_HOST_ID", "WSHUB_HOST_HEARTBEAT", "WSHUB_HOST_LOST_AFTER"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	c, err := hub.LoadConfig()
	if err != nil || c.HostID != hostname || c.HostHeartbeat != 30*time.Second || c.HostLostAfter != 10*time.Minute {
		t.Fatalf("expected the hostname %q, 30s and 10m by default, got %q, %s, %s (%v)", hostname, c.HostID, c.HostHeartbeat, c.HostLostAfter, err)
	}
	for _, tc := range []struct {
		id, heartbeat, lostAfter string
		refused                  string // "" accepted
	}{
		{"hub-a.example_1", "", "", ""},
		{strings.Repeat("h", 63), "", "", ""},
		{strings.Repeat("h", 64), "", "", `WSHUB_HOST_ID "` + strings.Repeat("h", 64) + `": a host id has at most 63 characters, not 64`},
		{"hub a", "", "", `WSHUB_HOST_ID "hub a": a host id has letters, digits, '.', '-' and '_' only, not ' '`},
		{"hub/a", "", "", `not '/'`},
		{"hüb", "", "", `not 'ü'`},
		{"hub-a", "10s", "30s", ""},
		{"hub-a", "10s", "29s", "WSHUB_HOST_LOST_AFTER (29s) must be at least three WSHUB_HOST_HEARTBEAT periods (3 × 10s)"},
		{"hub-a", "", "1m", "WSHUB_HOST_LOST_AFTER (1m0s) must be at least three WSHUB_HOST_HEARTBEAT periods (3 × 30s)"},
		{"hub-a", "0s", "", "WSHUB_HOST_HEARTBEAT (0s) must be positive"},
		{"hub-a", "", "0s", "WSHUB_HOST_LOST_AFTER (0s) must be at least three"},
		{"hub-a", "", "ten minutes", `WSHUB_HOST_LOST_AFTER: unable to parse duration`},
	} {
		for k, v := range map[string]string{"WSHUB_HOST_ID": tc.id, "WSHUB_HOST_HEARTBEAT": tc.heartbeat, "WSHUB_HOST_LOST_AFTER": tc.lostAfter} {
			if v == "" {
				os.Unsetenv(k)
			} else {
				t.Setenv(k, v)
			}
		}
		c, err := hub.LoadConfig()
		switch {
		case tc.refused == "" && (err != nil || c.HostID != tc.id):
			t.Errorf("%q, %q, %q: expected accepted, got %q (%v)", tc.id, tc.heartbeat, tc.lostAfter, c.HostID, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%q, %q, %q: expected refused with %q, got %v", tc.id, tc.heartbeat, tc.lostAfter, tc.refused, err)
		}
	}
}

// A Config built in code gets the defaults for what it leaves unset, and the same
// checks for what it sets.
func TestHostSettingsOfAConfigBuiltInCode(t *testing.T) {
	store, dbURL := pgtest.NewStore(t)
	base := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}}
	h, err := hub.New(base, store, nil, hub.Options{Admin: true})
	if err != nil || h.Config.HostID == "" || h.Config.HostHeartbeat != hub.DefaultHostHeartbeat || h.Config.HostLostAfter != hub.DefaultHostLostAfter {
		t.Fatalf("expected the hostname and the defaults, got %q, %s, %s (%v)", h.Config.HostID, h.Config.HostHeartbeat, h.Config.HostLostAfter, err)
	}
	for _, c := range []struct {
		edit    func(*hub.Config)
		refused string
	}{
		{func(c *hub.Config) { c.HostID = "hub:a" }, `WSHUB_HOST_ID "hub:a"`},
		{func(c *hub.Config) { c.HostLostAfter = 2 * time.Second }, "WSHUB_HOST_LOST_AFTER (2s) must be at least three WSHUB_HOST_HEARTBEAT periods (3 × 30s)"},
		{func(c *hub.Config) { c.HostHeartbeat = -time.Second }, "WSHUB_HOST_HEARTBEAT (-1s) must be positive"},
	} {
		cfg := base
		c.edit(&cfg)
		if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), c.refused) {
			t.Errorf("expected refused with %q, got %v", c.refused, err)
		}
	}
}
