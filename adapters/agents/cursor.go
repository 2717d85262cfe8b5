package agents

import (
	"strings"

	"github.com/wshub/wshub/core"
)

// cursorCLI drives Cursor Agent (agent_3) in print mode:
//
//	cursor-agent --print --output-format stream-json --trust [--model M] <permissions> [--resume SESSION] -- PROMPT
//
// The prompt is the last argument (print mode takes it there), after "--" so that a
// prompt starting with "-" is not read as an option; a prompt of one word gets a
// trailing newline so it cannot be taken for one of the CLI's commands (ls, status,
// update, …). --trust trusts the checkout without the interactive prompt that print
// mode cannot answer.
//
// Permissions by runtimeMode. In print mode, without --force changes are only
// proposed, not applied; --force runs tools unless a permission rule denies them;
// --sandbox enabled confines shell commands (workspace writes, no network):
//
//	auto                        --force --sandbox enabled
//	approval-required           (nothing: changes are proposed, never applied)
//	auto-accept-edits           --force --sandbox enabled
//	auto-accept-edits-and-bash  --force --sandbox disabled
//	full-access                 --force --sandbox disabled --approve-mcps
//
// Output is stream-json, the shape Claude Code uses (see streamJSON), with tool calls
// as their own "tool_call" events. Its result event's text is every assistant message
// of the turn concatenated, so the reply is the last assistant message instead (the
// result text only when there is none); the session is the session_id.
var cursorCLI = agentCLI{
	name:      core.AgentProduct("agent_3"),
	program:   Programs["agent_3"],
	args:      cursorArgs,
	newParser: func() outputParser { return &streamJSON{} },
}

func cursorArgs(req core.TurnRequest, mode, prompt string) []string {
	args := []string{"--print", "--output-format", "stream-json", "--trust"}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	switch mode {
	case "auto", "auto-accept-edits":
		args = append(args, "--force", "--sandbox", "enabled")
	case "auto-accept-edits-and-bash":
		args = append(args, "--force", "--sandbox", "disabled")
	case "full-access":
		args = append(args, "--force", "--sandbox", "disabled", "--approve-mcps")
	}
	if req.SessionID != "" {
		args = append(args, "--resume", req.SessionID)
	}
	if !strings.ContainsAny(prompt, " \t\n") {
		prompt += "\n"
	}
	return append(args, "--", prompt)
}
