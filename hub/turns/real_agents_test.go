package turns_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/agentcli"
	"github.com/wshub/wshub/internal/testkit/modelapi"
)

// Real Claude Code, found at WSHUB_CLAUDE_PATH and calling the model API at
// WSHUB_CLAUDE_BASE_URL, runs an approval-required turn through the API, on the local
// provider and in a `wshub runtime` process (asking over the runtime API), in the
// sandbox: its ask for a command whose dangerous tail follows 400 spaces reaches the
// API whole, the API's allow runs exactly that command, tail included, and the reply
// comes back. (The stand-in listens on loopback, which the sandbox reaches in the
// project's default network, full.)
func TestRealClaudeCodeTurnThroughTheAPI(t *testing.T) {
	cli := agentcli.Claude(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	command := "echo safe" + strings.Repeat(" ", 400) + "; touch /workspace/tail-ran && echo tail-ran"
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			api := modelapi.New(t)
			api.Script(modelapi.Reply{Command: command}, modelapi.Reply{Text: "finished"})
			h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithProcessProvider(t), hubtest.WithConfig(func(c *hub.Config) {
				c.ClaudePath, c.ClaudeBaseURL = cli.Path, api.URL
				c.SandboxReadOnly = []string{cli.Dir}
				c.AgentEnv = []string{"ANTHROPIC_API_KEY"}
				c.Self = hubtest.WshubBinary(t)
				c.ApprovalTimeout = time.Minute
			}))
			h.SetProjectNetwork(core.NetworkHost) // the stand-in listens on the host's loopback
			id, events, drop := firstTurn(t, h, provider, "Run the command", "runtimeMode", "approval-required")
			defer drop()

			asked, _ := hubtest.NextOf(t, events, "approval_requested")
			var input struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(asked.Input, &input)
			if asked.Tool != "Bash" || input.Command != command || asked.InputSHA256 == "" {
				t.Fatalf("expected the ask for Bash with the whole command (%d characters) as its input, got %s %s", len(command), asked.Tool, asked.Input)
			}
			hubtest.Decide(t, h, id, asked.ApprovalID, "allow", 200, "")
			hubtest.WaitFor(t, h, id, "idle after the turn", hubtest.IdleAfterTurns(1))
			if got := hubtest.Replies(t, h, id); len(got) != 1 || got[0] != "completed: finished" {
				t.Fatalf("expected the turn completed with the reply, got %q", got)
			}
			if got := api.ToolResults(); len(got) != 1 || got[0] != "safe\ntail-ran" {
				t.Fatalf("expected the allowed command to run whole, its tail included, got the output %q", got)
			}
			if _, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", id, "checkout", "tail-ran")); provider == "local" && err != nil {
				t.Fatalf("expected the tail's file in the checkout: %v", err)
			}
		})
	}
}

// Real Codex, found at WSHUB_CODEX_PATH and calling the Responses API at
// WSHUB_CODEX_BASE_URL, runs two turns of a workspace through the API, on the local
// provider and in a `wshub runtime` process (which gets those settings from the hub):
// the first runs a command (its step on the event stream), the second resumes the
// same thread.
func TestRealCodexTurnsThroughTheAPI(t *testing.T) {
	cli := agentcli.Codex(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			api := modelapi.New(t)
			const command = "echo hi > f.txt && echo written"
			api.Script(modelapi.Reply{Command: command}, modelapi.Reply{Text: "done"}, modelapi.Reply{Text: "again"})
			h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithProcessProvider(t), hubtest.WithConfig(func(c *hub.Config) {
				c.CodexPath, c.CodexBaseURL = cli.Path, api.URL+"/v1"
				c.SandboxReadOnly = []string{cli.Dir}
				c.AgentEnv = []string{"OPENAI_API_KEY"}
			}))
			h.SetProjectNetwork(core.NetworkHost) // the stand-in listens on the host's loopback
			id, events, drop := firstTurn(t, h, provider, "Write hi to f.txt", "agent", "agent_2", "runtimeMode", "full-access")
			defer drop()
			started, _ := hubtest.NextOf(t, events, "tool_started")
			if started.Tool != "command" || started.Summary != command {
				t.Fatalf("expected the command's step, got %+v", started)
			}
			hubtest.WaitFor(t, h, id, "idle after the first turn", hubtest.IdleAfterTurns(1))
			hubtest.Send(t, h, id, "Once more")
			hubtest.WaitFor(t, h, id, "idle after the second turn", hubtest.IdleAfterTurns(2))
			if got := hubtest.Replies(t, h, id); len(got) != 2 || got[0] != "completed: done" || got[1] != "completed: again" {
				t.Fatalf("expected both turns completed, got %q", got)
			}
			main := api.Main()
			if len(main) != 3 || !main[2].ContainsText("Write hi to f.txt") || !main[2].ContainsText("written") ||
				main[2].Header.Get("Session-Id") != main[0].Header.Get("Session-Id") {
				t.Fatalf("expected the second turn to resume the first one's thread, got %d requests", len(main))
			}
		})
	}
}

// firstTurn creates a workspace on provider (with extra fields), follows its events
// and sends prompt; a failed test shows how the workspace's turns ended.
func firstTurn(t *testing.T, h *hubtest.Hub, provider, prompt string, extra ...any) (string, <-chan hubtest.Event, func()) {
	t.Helper()
	id := hubtest.CreateOn(t, h, provider, "", extra...)
	events, drop := hubtest.Stream(t, h, id, "")
	t.Cleanup(func() {
		if t.Failed() {
			msgs, failure := hubtest.Messages(t, h, id)
			t.Logf("messages %+v; turn failure %v", msgs, failure)
		}
	})
	hubtest.Send(t, h, id, prompt)
	return id, events, drop
}
