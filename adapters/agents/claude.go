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
//	approval-required           --permission-mode default --permission-prompt-tool
//	                            mcp__wshub__approve --mcp-config <wshub approval-mcp>
//	                            --strict-mcp-config: each permission Claude Code would
//	                            ask for goes to the hub, and a person decides
//	                            (approval_mcp.go). Without the wshub binary to serve the
//	                            tool: --permission-mode dontAsk (what would need
//	                            approval is denied, not asked).
//	auto-accept-edits           --permission-mode acceptEdits
//	auto-accept-edits-and-bash  --permission-mode acceptEdits --allowedTools Bash
//	full-access                 --dangerously-skip-permissions
//
// Claude Code refuses --dangerously-skip-permissions when run as root unless
// IS_SANDBOX=1 is set (the hub's environment is passed on, so an operator running the
// hub as root in a container sets it there).
//
// It never updates itself (DISABLE_AUTOUPDATER): its install is read-only in the
// sandbox, and the operator picks its version. With another endpoint (an LLM gateway,
// WSHUB_CLAUDE_BASE_URL) it calls that in ANTHROPIC_BASE_URL, and sends nothing
// else anywhere (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: telemetry, error reports,
// release notes), as a team that routes its model traffic through a gateway does
// not expect calls around it.
var claudeCLI = agentCLI{
	name:          core.AgentProduct("agent_1"),
	program:       Programs["agent_1"],
	args:          claudeArgs,
	promptOnStdin: true,
	newParser:     func() outputParser { return &streamJSON{preferResult: true} },
	askArgs:       claudeAskArgs,
	env:           []string{"DISABLE_AUTOUPDATER=1"},
	endpoint: func(args []string, baseURL string) ([]string, []string) {
		return []string{"ANTHROPIC_BASE_URL=" + baseURL, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}, args
	},
}

// claudeAskArgs replaces dontAsk with the permission prompt tool. --strict-mcp-config
// keeps MCP servers from anywhere else (a checkout's .mcp.json) out of the turn: none
// can stand in for the wshub server and answer its own permissions.
func claudeAskArgs(args []string, mcpConfig string) []string {
	out := make([]string, 0, len(args)+6)
	for i := 0; i < len(args); i++ {
		if args[i] == "--permission-mode" && i+1 < len(args) && args[i+1] == "dontAsk" {
			out = append(out, "--permission-mode", "default", "--permission-prompt-tool", permissionPromptTool,
				"--mcp-config", mcpConfig, "--strict-mcp-config")
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
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
