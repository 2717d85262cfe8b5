package agents

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// A hub configured from an environment of its own (a command given one, as wshub's
// tests do) passes that one on to its agents, not the process's: PATH, LANG, TERM and
// the credentials WSHUB_AGENT_ENV names come from Options.LookupEnv.
func TestCommandEnvironmentIsTheOneTheHubWasGiven(t *testing.T) {
	t.Parallel()
	given := map[string]string{"PATH": "/given/bin:" + os.Getenv("PATH"), "LANG": "xx_XX.UTF-8", "TERM": "given-term",
		"GIVEN_AGENT_KEY": "from-the-command"}
	lookup := func(name string) (string, bool) { v, ok := given[name]; return v, ok }
	r, err := New(context.Background(), Options{Commands: map[string]string{"agent_1": `cat >/dev/null; env | sort`},
		StateDir: t.TempDir(), AgentEnv: []string{"GIVEN_AGENT_KEY"}, LookupEnv: lookup, Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	res := r.RunTurn(context.Background(), turn(t, "agent_1", "auto", ""))
	if res.Outcome != core.OutcomeCompleted {
		t.Fatalf("expected the turn completed, got %+v", res)
	}
	for name, value := range given {
		if !strings.Contains("\n"+res.Reply+"\n", "\n"+name+"="+value+"\n") {
			t.Errorf("expected the agent to get %s=%s, as the hub was given, got:\n%s", name, value, res.Reply)
		}
	}
}
