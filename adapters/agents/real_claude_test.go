package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/agentcli"
	"github.com/wshub/wshub/internal/testkit/modelapi"
)

// Real Claude Code runs a command the model asked for with its Bash tool, reports the
// turn's steps, sends the output back, and a second turn resumes the same session
// with the first turn's conversation.
func TestRealClaudeCodeRunsAToolAndResumesTheSession(t *testing.T) {
	toolThenResume(t, "agent_1", agentcli.Claude(t), "echo hi > f.txt && echo written", "Bash", "X-Claude-Code-Session-Id")
}

// A model API error fails a real Claude Code turn with the API's message, which is not
// shown as the model's text (Claude Code reports it as a made-up assistant message).
func TestRealClaudeCodeAPIErrorFailsTheTurn(t *testing.T) {
	apiError(t, "agent_1", agentcli.Claude(t), "API Error: 400 modelapi: no scripted answer left for this request")
}

// Stopping a real Claude Code turn while its tool runs ends every process of the turn
// and the turn is interrupted.
func TestRealClaudeCodeStopEndsTheTurnAndItsProcesses(t *testing.T) {
	stopMidTool(t, "agent_1", agentcli.Claude(t))
}

// Each runtime mode's flags are accepted by real Claude Code, and a command that is
// not a file edit runs only where the mode lets it: auto-accept-edits accepts edits,
// not commands; approval-required without the wshub binary denies (dontAsk); auto's
// check runs on Anthropic's server, so against another endpoint (here the stand-in)
// it never runs and what it would check is denied.
func TestRealClaudeCodeAcceptsEveryRuntimeMode(t *testing.T) {
	everyMode(t, "agent_1", agentcli.Claude(t), map[string]bool{
		"auto": false, core.ModeApprovalRequired: false, "auto-accept-edits": false,
		"auto-accept-edits-and-bash": true, "full-access": true,
	})
}

// In the approval-required mode real Claude Code asks the runner through the
// permission prompt tool (`wshub approval-mcp`), with the whole command: one whose
// dangerous tail follows 400 spaces is asked about tail included, runs exactly as
// asked when allowed, and does not run when denied.
func TestRealClaudeCodeAsksApprovalForTheWholeCommand(t *testing.T) {
	cli := agentcli.Claude(t)
	api := modelapi.New(t)
	r := realRunner(t, cli, api, hubtest.WshubBinary(t))
	command := "echo safe" + strings.Repeat(" ", 400) + "; touch /workspace/tail-ran"
	deny := func(context.Context, core.ApprovalAsk) core.ApprovalAnswer {
		return core.ApprovalAnswer{Reason: "Denied by a person reviewing this workspace."}
	}
	tests := []struct {
		name   string
		answer func(context.Context, core.ApprovalAsk) core.ApprovalAnswer
		ran    bool
		result string
	}{
		{"allowed", allowAsked, true, "safe"},
		{"denied", deny, false, "Denied by a person reviewing this workspace."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api.Script(modelapi.Reply{Command: command}, modelapi.Reply{Text: "finished"})
			before := len(api.ToolResults())
			a := &asks{answer: tt.answer}
			req, _ := realTurn(t, "agent_1", core.ModeApprovalRequired, "Run the command")
			req.Approve = a.approve
			res := r.RunTurn(context.Background(), req)
			if res.Outcome != core.OutcomeCompleted || res.Reply != "finished" {
				t.Fatalf("expected the turn completed, got %+v", res)
			}
			got := a.seen()
			var input struct {
				Command string `json:"command"`
			}
			if len(got) == 1 {
				_ = json.Unmarshal(got[0].Input, &input)
			}
			if len(got) != 1 || got[0].Tool != "Bash" || input.Command != command {
				t.Fatalf("expected one ask for Bash with the whole command (%d bytes) as its input, got %+v", len(command), got)
			}
			if ran := exists(filepath.Join(req.Dir, "tail-ran")); ran != tt.ran {
				t.Fatalf("expected the tail run: %v, got %v", tt.ran, ran)
			}
			results := api.ToolResults()[before:]
			if len(results) != 1 || !strings.Contains(results[0], tt.result) {
				t.Fatalf("expected the tool result to say %q, got %q", tt.result, results)
			}
		})
	}
}

// A model gateway on the hub's host (the stand-in on the host's loopback) that
// WSHUB_AGENT_EGRESS_ALLOW names is reached by real Claude Code with the project
// network full, at the same address, and no other port of the host's loopback is:
// the command the model asks for, to another listener there, is refused.
func TestRealClaudeCodeReachesAnAllowedGatewayOnTheHostsLoopbackWithNetworkFull(t *testing.T) {
	cli := agentcli.Claude(t)
	api := modelapi.New(t)
	// Connections to it are made by the kernel, accepted or not.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	r := realRunner(t, cli, api, "")
	api.Script(modelapi.Reply{Command: fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo reached || echo refused",
		other.Addr().(*net.TCPAddr).Port)}, modelapi.Reply{Text: "done"})
	req, _ := realTurn(t, "agent_1", "full-access", "Try the other port")
	req.Network = core.NetworkFull
	res := r.RunTurn(context.Background(), req)
	if res.Outcome != core.OutcomeCompleted || res.Reply != "done" {
		t.Fatalf("expected the turn to reach the model on the host's loopback and complete with done, got %+v", res)
	}
	if got := api.ToolResults(); len(got) != 1 || !strings.Contains(got[0], "refused") {
		t.Fatalf("expected the other port of the host's loopback refused, got the tool results %q", got)
	}
}
