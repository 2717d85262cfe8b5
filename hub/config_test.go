package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
)

// A setting the hub cannot read stops it naming the variable the operator set, not
// the Go field behind it; every such setting is named at once.
func TestASettingThatCannotBeReadIsNamed(t *testing.T) {
	t.Setenv("WSHUB_TURN_TIMEOUT", "soon")
	t.Setenv("WSHUB_MAX_WORKSPACES", "many")
	t.Setenv("WSHUB_ROLES", "worker,api")
	_, err := hub.LoadConfig()
	if err == nil {
		t.Fatal("expected the settings refused")
	}
	for _, want := range []string{`WSHUB_TURN_TIMEOUT: unable to parse duration: time: invalid duration "soon"`,
		`WSHUB_MAX_WORKSPACES: strconv.ParseInt: parsing "many"`, `WSHUB_ROLES: unknown role "api"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("expected the error to say %q, got %v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "WSHUB_ROLES"); n != 1 {
		t.Errorf("expected WSHUB_ROLES named once (its parser names it), got %d times: %v", n, err)
	}
}

// The setting is a duration above 0, or the hub does not start; a Config built in
// code may leave it 0 (the runtime's default).
func TestRuntimeHubLostAfterIsADurationAboveZero(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		err   string
	}{
		{"", 10 * time.Minute, ""},
		{"90s", 90 * time.Second, ""},
		{"0", 0, "WSHUB_RUNTIME_HUB_LOST_AFTER (0s) must be more than 0"},
		{"-1m", 0, "WSHUB_RUNTIME_HUB_LOST_AFTER (-1m0s) must be more than 0"},
		{"soon", 0, `WSHUB_RUNTIME_HUB_LOST_AFTER: unable to parse duration: time: invalid duration "soon"`},
	} {
		t.Setenv("WSHUB_RUNTIME_HUB_LOST_AFTER", tt.value)
		c, err := hub.LoadConfig()
		switch {
		case tt.err == "" && (err != nil || c.RuntimeHubLostAfter != tt.want):
			t.Errorf("%q: expected %s, got %s (%v)", tt.value, tt.want, c.RuntimeHubLostAfter, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: expected an error saying %q, got %v", tt.value, tt.err, err)
		}
	}
	store, dbURL := pgtest.NewStore(t)
	cfg := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}, RuntimeHubLostAfter: -time.Second}
	if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), "WSHUB_RUNTIME_HUB_LOST_AFTER (-1s) must be more than 0") {
		t.Fatalf("expected a negative setting refused, got %v", err)
	}
}

// WSHUB_CACHE_MAX_BYTES is 5 GiB unless set; 0 turns caches off, and a negative cap
// is refused at start.
func TestCacheMaxBytesDefaultsToFiveGiBAndIsNeverNegative(t *testing.T) {
	t.Setenv("WSHUB_CACHE_MAX_BYTES", "")
	if c, err := hub.LoadConfig(); err != nil || c.CacheMaxBytes != 5<<30 {
		t.Fatalf("expected 5 GiB by default, got %d (%v)", c.CacheMaxBytes, err)
	}
	store, dbURL := pgtest.NewStore(t)
	cfg := hub.Config{DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}, CacheMaxBytes: -1}
	if _, err := hub.New(cfg, store, nil, hub.Options{Admin: true}); err == nil || !strings.Contains(err.Error(), "WSHUB_CACHE_MAX_BYTES (-1) must be 0 (no caches) or more") {
		t.Fatalf("expected a negative cap refused, got %v", err)
	}
}
