package agents

import "github.com/wshub/wshub/core"

// claudeCLI drives Claude Code (agent_1) in print mode:
//
//	claude -p --output-format stream-json --verbose [--model M] <permissions> [--resume SESSION]
//
// with the prompt on standard input (print mode reads it there when no prompt
// argument is given). stream-json, unlike json, names the session at the start
// (system/init), so an interrupted turn can still be resumed, and shows the answer
// so far; print mode accepts it only with --verbose. The reply is the result event's
// text, the session its session_id; a result with is_error true is a failure.
//
// Permissions by runtimeMode (choices of --permission-mode: acceptEdits, auto,
// bypassPermissions, default, dontAsk, plan):
//
//	auto                        --permission-mode auto (Claude Code's classifier decides)
//	approval-required           --permission-mode dontAsk (nobody can approve in print
//	                            mode: what would need approval is denied, not asked)
//	auto-accept-edits           --permission-mode acceptEdits
//	auto-accept-edits-and-bash  --permission-mode acceptEdits --allowedTools Bash
//	full-access                 --dangerously-skip-permissions
//
// Claude Code refuses --dangerously-skip-permissions when run as root unless
// IS_SANDBOX=1 is set (the hub's environment is passed on, so an operator running the
// hub as root in a container sets it there).
var claudeCLI = agentCLI{
	name:          "Claude Code",
	program:       Programs["agent_1"],
	args:          claudeArgs,
	promptOnStdin: true,
	newParser:     func() outputParser { return &streamJSON{preferResult: true} },
}

func claudeArgs(req core.TurnRequest, mode, _ string) []string {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	switch mode {
	case "auto":
		args = append(args, "--permission-mode", "auto")
	case "approval-required":
		args = append(args, "--permission-mode", "dontAsk")
	case "auto-accept-edits":
		args = append(args, "--permission-mode", "acceptEdits")
	case "auto-accept-edits-and-bash":
		args = append(args, "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	case "full-access":
		args = append(args, "--dangerously-skip-permissions")
	}
	if req.SessionID != "" {
		args = append(args, "--resume", req.SessionID)
	}
	return args
}
