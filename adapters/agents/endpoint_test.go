package agents

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/sandbox"
)

// The path set for Claude Code or Codex is where its program is found, instead of
// PATH; a set path that is not there makes the agent unavailable rather than falling
// back to PATH; other programs are found on PATH.
func TestProgramLookPathPrefersTheSetPath(t *testing.T) {
	dir := t.TempDir()
	claude := filepath.Join(dir, "my-claude")
	if err := os.WriteFile(claude, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	onPath := func(p string) (string, error) { return "/usr/bin/" + p, nil }
	tests := []struct {
		name, claudePath, program, want string
		err                             bool
	}{
		{"set path", claude, "claude", claude, false},
		{"nothing set", "", "claude", "/usr/bin/claude", false},
		{"set path missing", filepath.Join(dir, "missing"), "claude", "", true},
		{"another program", claude, "cursor-agent", "/usr/bin/cursor-agent", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ProgramLookPath(tt.claudePath, "", onPath)(tt.program)
			if got != tt.want || (err != nil) != tt.err {
				t.Fatalf("expected %q (error: %v), got %q, %v", tt.want, tt.err, got, err)
			}
			if tt.err && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, exec.ErrNotFound) {
				t.Fatalf("expected a not-found error, got %v", err)
			}
		})
	}
}

// A model endpoint that is not an http(s) URL is refused when the runner is made.
func TestAnEndpointThatIsNotAnHTTPURLIsRefused(t *testing.T) {
	for _, u := range []string{"llm.example.com", "ftp://llm.example.com", "http://", "::"} {
		_, err := New(context.Background(), Options{StateDir: t.TempDir(), Sandbox: sandbox.Config{Mode: sandbox.ModeNone}, CodexBaseURL: u})
		if err == nil || !strings.Contains(err.Error(), "Codex base URL") {
			t.Errorf("%q: expected the Codex base URL refused, got %v", u, err)
		}
	}
}

// With a Codex endpoint, every turn (a resumed one too) defines the provider and picks
// it before "resume"; Claude Code gets the endpoint in its environment.
func TestEndpointsReachTheCLIs(t *testing.T) {
	t.Run("codex", func(t *testing.T) {
		f := newFakeCLI(t, "codex", printing("codex-exec.jsonl", 0))
		r, err := New(context.Background(), Options{LookPath: f.lookPath, StateDir: t.TempDir(),
			Sandbox: sandbox.Config{Mode: sandbox.ModeNone}, CodexBaseURL: "https://llm.example.com/openai/v1"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close) // what it prepares for workspaces' next turns
		r.RunTurn(context.Background(), turn(t, "agent_2", "auto", "thread-1"))
		checkArgv(t, "argv", f.argv(), []string{"exec", "-c", `model_provider="wshub"`, "-c",
			`model_providers.wshub={name="wshub",base_url="https://llm.example.com/openai/v1",wire_api="responses",env_key="OPENAI_API_KEY"}`,
			"--json", "--skip-git-repo-check", "--model=test-model", "--sandbox", "workspace-write", "resume", "thread-1", "-"})
	})
	t.Run("claude", func(t *testing.T) {
		f := newFakeCLI(t, "claude", `printf '%s\n' "$ANTHROPIC_BASE_URL|$CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC|$DISABLE_AUTOUPDATER" > "$HOME/env"`)
		r, err := New(context.Background(), Options{LookPath: f.lookPath, StateDir: t.TempDir(),
			Sandbox: sandbox.Config{Mode: sandbox.ModeNone}, ClaudeBaseURL: "https://llm.example.com/anthropic"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.Close) // what it prepares for workspaces' next turns
		req := turn(t, "agent_1", "auto", "")
		r.RunTurn(context.Background(), req)
		b, err := os.ReadFile(filepath.Join(req.Home, "env"))
		if want := "https://llm.example.com/anthropic|1|1\n"; err != nil || string(b) != want {
			t.Fatalf("expected the endpoint in Claude Code's environment %q, got %q, %v", want, b, err)
		}
	})
}
