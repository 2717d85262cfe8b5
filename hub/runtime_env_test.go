package hub

import (
	"slices"
	"testing"
)

// A process runtime gets the variables of the environment the hub's configuration
// was read from (a command's own, in wshub's tests), not the test process's: the
// credentials WSHUB_AGENT_ENV names, PATH, the locale, and the agents' commands.
func TestRuntimesGetTheEnvironmentTheConfigurationWasReadFrom(t *testing.T) {
	t.Parallel()
	cfg, err := LoadConfigFrom([]string{"DATABASE_URL=postgres://127.0.0.1/given", "WSHUB_AGENT_ENV=GIVEN_AGENT_KEY",
		"GIVEN_AGENT_KEY=from-the-command", "PATH=/given/bin", "LANG=xx_XX.UTF-8", "WSHUB_AGENT_2_COMMAND=/given/agent"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DatabaseURL != "postgres://127.0.0.1/given" {
		t.Fatalf("expected the configuration read from the environment given, got DATABASE_URL %q", cfg.DatabaseURL)
	}
	env := runtimeEnv(cfg)
	for _, want := range []string{"GIVEN_AGENT_KEY=from-the-command", "PATH=/given/bin", "LANG=xx_XX.UTF-8", "WSHUB_AGENT_2_COMMAND=/given/agent"} {
		if !slices.Contains(env, want) {
			t.Errorf("expected the runtime to get %s, got %v", want, env)
		}
	}
}
