package agents_test

import (
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/agentcli"
)

// Real Codex, pointed at the stand-in by the runner's endpoint setting, runs a
// command the model asked for, reports the turn's steps (the command as asked, with
// quotes of both kinds, not Codex's shell-quoted argv around it), sends the output
// back, and a second turn resumes the same thread with the first turn's conversation.
func TestRealCodexRunsAToolAndResumesTheSession(t *testing.T) {
	toolThenResume(t, "agent_2", agentcli.Codex(t), `echo 'hi' > f.txt && echo "written"`, "command", "Session-Id")
}

// A model API error fails a real Codex turn with the API's message, not the response
// body Codex reports it in.
func TestRealCodexAPIErrorFailsTheTurn(t *testing.T) {
	apiError(t, "agent_2", agentcli.Codex(t), "modelapi: no scripted answer left for this request")
}

// Stopping a real Codex turn while its command runs ends every process of the turn
// and the turn is interrupted.
func TestRealCodexStopEndsTheTurnAndItsProcesses(t *testing.T) {
	stopMidTool(t, "agent_2", agentcli.Codex(t))
}

// Each runtime mode's flags are accepted by real Codex, and its own sandbox works
// inside the hub's: approval-required (read-only) keeps a command from writing, the
// other modes let it.
func TestRealCodexAcceptsEveryRuntimeMode(t *testing.T) {
	everyMode(t, "agent_2", agentcli.Codex(t), map[string]bool{
		"auto": true, core.ModeApprovalRequired: false, "auto-accept-edits": true,
		"auto-accept-edits-and-bash": true, "full-access": true,
	})
}
