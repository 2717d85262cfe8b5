package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// The runner in its sandbox: where a turn's agent program, checkout, home and session
// file are, as the agent sees them. What the sandbox itself keeps from an agent is
// adapters/sandbox's to test.

// hostLayout is a hub data directory holding one workspace's checkout and home, as the
// local provider lays them out.
type hostLayout struct{ data, checkout, home string }

func newHostLayout(t *testing.T) hostLayout {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	ws := filepath.Join(data, "workspaces", "ws_mine")
	l := hostLayout{data: data, checkout: filepath.Join(ws, "checkout"), home: filepath.Join(ws, "home")}
	if err := os.MkdirAll(l.checkout, 0o755); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l hostLayout) turn(network, prompt string) core.TurnRequest {
	return core.TurnRequest{WorkspaceID: "ws_mine", TurnID: "turn_1", Agent: "agent_1", Model: "m",
		RuntimeMode: "full-access", Branch: "main", Dir: l.checkout, Home: l.home, Network: network, Prompt: prompt}
}

// sandboxed is a runner with the bubblewrap sandbox, hiding l's data directory, whose
// agent_1 is command.
func sandboxed(t *testing.T, l hostLayout, command string) *Runner {
	t.Helper()
	r, err := New(context.Background(), Options{Commands: map[string]string{"agent_1": command},
		StateDir: filepath.Join(l.data, "run"), Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap, Hidden: []string{l.data}}})
	if err != nil {
		t.Fatalf("expected the bubblewrap sandbox to work here (make test installs bubblewrap): %v", err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	return r
}

// writeFile makes a file of content with mode (0o755: a program).
func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestSandboxWithARelativeDataDirectory(t *testing.T) {
	// WSHUB_DATA_DIR defaults to ".data": the checkout and home reach the runner as
	// relative paths.
	l := newHostLayout(t)
	t.Chdir(filepath.Dir(l.data))
	r, err := New(context.Background(), Options{
		Commands: map[string]string{"agent_1": `cat >/dev/null; pwd; echo "$HOME"; echo s > "$WSHUB_SESSION_FILE"`},
		StateDir: filepath.Join("data", "run"), Sandbox: sandbox.Config{Hidden: []string{"data"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	req := l.turn(core.NetworkFull, "hi")
	req.Dir, req.Home = filepath.Join("data", "workspaces", "ws_mine", "checkout"), filepath.Join("data", "workspaces", "ws_mine", "home")
	if res := r.RunTurn(context.Background(), req); res.Reply != "/workspace\n/home/agent" || res.SessionID != "s" {
		t.Fatalf("expected the turn to run in /workspace with HOME /home/agent, got %+v", res)
	}
}

func TestSandboxHidesProgramsOutsideItsPaths(t *testing.T) {
	l := newHostLayout(t)
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "claude"), "#!/bin/sh\necho hi\n", 0o755)
	installed := true
	lookPath := func(string) (string, error) {
		if !installed {
			return "", exec.ErrNotFound
		}
		return filepath.Join(bin, "claude"), nil
	}
	// Found at start: the hub refuses to start.
	if _, err := New(context.Background(), Options{StateDir: filepath.Join(l.data, "run"), LookPath: lookPath}); err == nil ||
		!strings.Contains(err.Error(), "WSHUB_SANDBOX_READONLY") {
		t.Fatalf("expected a CLI the sandbox cannot see refused at start naming WSHUB_SANDBOX_READONLY, got %v", err)
	}
	// Installed there after the start: its turns end agent_not_installed, saying why.
	installed = false
	r, err := New(context.Background(), Options{StateDir: filepath.Join(l.data, "run"), LookPath: lookPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	installed = true
	req := l.turn(core.NetworkFull, "hi")
	res := r.RunTurn(context.Background(), req)
	if res.FailureCode != core.FailureAgentNotInstalled || !strings.Contains(res.FailureMessage, "WSHUB_SANDBOX_READONLY") {
		t.Errorf("expected agent_not_installed naming WSHUB_SANDBOX_READONLY for a CLI the sandbox cannot see, got %+v", res)
	}
}
