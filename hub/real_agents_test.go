package hub_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/agentcli"
	"github.com/wshub/wshub/internal/modelapi"
)

// Real Claude Code, found at WSHUB_CLAUDE_PATH and calling the model API at
// WSHUB_CLAUDE_BASE_URL, runs an approval-required turn through the API on the local
// provider, in the sandbox: its ask for a command whose dangerous tail follows 400
// spaces reaches the API whole, the API's allow runs exactly that command, and the
// reply comes back. (The stand-in listens on loopback, which the sandbox reaches in
// the project's default network, full.)
func TestRealClaudeCodeTurnThroughTheAPI(t *testing.T) {
	cli := agentcli.Claude(t)
	api := modelapi.New(t)
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	command := "echo safe" + strings.Repeat(" ", 400) + "; touch /workspace/tail-ran"
	api.Script(modelapi.Reply{Command: command}, modelapi.Reply{Text: "finished"})
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithConfig(func(c *hub.Config) {
		c.ClaudePath, c.ClaudeBaseURL = cli.Path, api.URL
		c.SandboxReadOnly = []string{cli.Dir}
		c.AgentEnv = []string{"ANTHROPIC_API_KEY"}
		c.Self = hubtest.WshubBinary(t)
		c.ApprovalTimeout = time.Minute
	}))
	id := createOn(t, h, "local", "", "runtimeMode", "approval-required")
	events, drop := stream(t, h, id, "")
	defer drop()
	send(t, h, id, "Run the command")

	asked, _ := nextOf(t, events, "approval_requested")
	if asked.Tool != "Bash" || asked.Summary != command {
		t.Fatalf("expected the ask for Bash with the whole command (%d characters), got %s %q (%d)", len(command), asked.Tool, asked.Summary, len(asked.Summary))
	}
	decide(t, h, id, asked.ApprovalID, "allow", 200, "")
	waitFor(t, h, id, "idle after the turn", idleAfterTurns(1))
	if got := replies(t, h, id); len(got) != 1 || got[0] != "completed: finished" {
		t.Fatalf("expected the turn completed with the reply, got %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", id, "checkout", "tail-ran")); err != nil {
		t.Fatalf("expected the allowed command to run whole, its tail included")
	}
	if len(api.Main()) != 2 {
		t.Fatalf("expected two conversation requests (the ask, then after the result), got %d", len(api.Main()))
	}
}
