package agents

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// An agent the hub lists can run: a command agent named by a quoted path, a path
// with a space, a program with arguments, or a script given to an interpreter runs in
// the sandbox (the files it names are shown read-only), where it used to end every
// turn agent_not_installed.
func TestCommandAgentsTheHubListsRun(t *testing.T) {
	l := newHostLayout(t)
	dir := filepath.Join(t.TempDir(), "my agent") // outside the sandbox's system paths
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run.sh")
	writeFile(t, run, "#!/bin/sh\ncat >/dev/null\necho \"ran with ${1:-no arguments}\"\n", 0o755)
	py := filepath.Join(dir, "agent.py")
	writeFile(t, py, "import sys\nsys.stdin.read()\nprint('python ran')\n", 0o644)
	tests := []struct{ name, command, want string }{
		{"single-quoted path with a space", "'" + run + "'", "ran with no arguments"},
		{"double-quoted path with a space", `"` + run + `"`, "ran with no arguments"},
		{"escaped space", strings.ReplaceAll(run, " ", `\ `), "ran with no arguments"},
		{"program with arguments", "'" + run + "' --fast", "ran with --fast"},
		{"script run by an interpreter", "sh '" + run + "' hi", "ran with hi"},
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		tests = append(tests, struct{ name, command, want string }{"python script", "python3 '" + py + "'", "python ran"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := sandboxed(t, l, tt.command).RunTurn(context.Background(), l.turn(core.NetworkNone, "go"))
			if res.Outcome != core.OutcomeCompleted || res.Reply != tt.want {
				t.Fatalf("expected %q, got %+v", tt.want, res)
			}
		})
	}
}

// A command agent that cannot run stops the hub at start, with the setting and the
// fix named, instead of being listed and failing every turn.
func TestAnAgentThatCannotRunStopsTheHub(t *testing.T) {
	l := newHostLayout(t)
	dir := t.TempDir()
	notExec := filepath.Join(dir, "agent.sh")
	writeFile(t, notExec, "#!/bin/sh\necho hi\n", 0o644)
	hidden := filepath.Join(dir, "bin")
	if err := os.MkdirAll(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(hidden, "hidden-agent"), "#!/bin/sh\necho hi\n", 0o755)
	t.Setenv("PATH", hidden+":"+os.Getenv("PATH"))
	for _, tt := range []struct{ command, want string }{
		{filepath.Join(dir, "missing.sh"), "does not exist"},
		{"'" + notExec + "'", "is not executable"},
		{"wshub-no-such-agent --flag", "is not on PATH"},
		{"hidden-agent", "outside the sandbox's read-only paths"},
		{"python3 " + filepath.Join(dir, "missing.py"), "its script"},
	} {
		_, err := New(context.Background(), Options{Commands: map[string]string{"agent_2": tt.command},
			StateDir: filepath.Join(l.data, "run"), Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap, Hidden: []string{l.data}}})
		if err == nil || !strings.Contains(err.Error(), "WSHUB_AGENT_2_COMMAND") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: expected the start refused naming WSHUB_AGENT_2_COMMAND and %q, got %v", tt.command, tt.want, err)
		}
	}
	// Not a simple command: run as it is, unchecked.
	if _, err := New(context.Background(), Options{Commands: map[string]string{"agent_2": "cd /tmp && exec wshub-no-such-agent"},
		StateDir: filepath.Join(l.data, "run"), Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap, Hidden: []string{l.data}}}); err != nil {
		t.Errorf("expected a compound command taken as it is, got %v", err)
	}
}
