package agents

import (
	"context"
	"fmt"
	"sync"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// agentCLI is how one coding-agent CLI is driven for a turn in headless mode.
type agentCLI struct {
	// name is the product, for messages ("Claude Code").
	name string
	// program is looked up on PATH (Programs).
	program string
	// args are the arguments after the program for a turn in mode (a valid
	// runtimeMode). prompt is the prompt with its attachments named; args places it
	// unless promptOnStdin.
	args func(req core.TurnRequest, mode, prompt string) []string
	// promptOnStdin sends the prompt on standard input (no argv length limit) instead
	// of in args.
	promptOnStdin bool
	// newParser reads the CLI's machine-readable standard output, one line at a time.
	newParser func() outputParser
	// askArgs, for a CLI that can ask someone in a headless turn, turns its
	// approval-required arguments into ones that ask through the permission prompt
	// tool served by `wshub approval-mcp` (mcpConfig: the inline MCP configuration).
	askArgs func(args []string, mcpConfig string) []string
	// endpoint points the CLI at another model API (baseURL, an LLM gateway): the
	// variables to add to its environment and its arguments changed to match.
	endpoint func(args []string, baseURL string) (env, newArgs []string)
	// env is added to the CLI's environment on every turn.
	env []string
}

// outputParser follows a CLI's JSON-lines output. line gets each line as it comes
// (the slice is reused afterwards); transcript says what the output amounted to, and
// is asked for once the process is gone.
type outputParser interface {
	line(b []byte)
	transcript() transcript
}

// transcript is what a CLI's output said about its turn.
type transcript struct {
	// reply is the final answer (on an interrupted turn, the answer so far).
	reply string
	// sessionID is the session to resume next turn, "" when the output named none.
	sessionID string
	// failed is true when the output reported the turn failed, even if the process
	// exited 0; errorText is what it said.
	failed    bool
	errorText string
}

// clis are the four agents' CLIs by agent id.
var clis = map[string]agentCLI{
	"agent_1": claudeCLI,
	"agent_2": codexCLI,
	"agent_3": cursorCLI,
	"agent_4": grokCLI,
}

// runCLI runs one turn of c: missing program -> agent_not_installed; interrupted ->
// the answer so far; non-zero exit or a reported failure -> agent_error with the
// CLI's error text (or its standard error's tail); else the final answer. The session
// is the one the output named, else the one resumed, so a failed turn does not lose
// the conversation.
func (r *Runner) runCLI(ctx context.Context, c agentCLI, req core.TurnRequest) core.TurnResult {
	mode, bad := runtimeMode(req)
	if bad != nil {
		return *bad
	}
	path, err := r.lookPath(c.program)
	if err != nil {
		return failed(core.FailureAgentNotInstalled, fmt.Sprintf("%s is not installed on this machine: the program %q was not found on PATH.", c.name, c.program))
	}
	at := r.place(req)
	if path, err = at.program(c.name, path); err != nil {
		return failed(core.FailureAgentNotInstalled, err.Error())
	}
	prompt := promptWithAttachments(req)
	args := c.args(req, mode, prompt)
	denied := &deniedTools{}
	env := c.env
	if u := r.endpoints[req.Agent]; u != "" && c.endpoint != nil {
		var more []string
		more, args = c.endpoint(args, u)
		env = append(append([]string(nil), env...), more...)
	}
	if mode == core.ModeApprovalRequired && req.Approve != nil && r.self != "" && c.askArgs != nil {
		req.Approve = denied.watch(req.Approve)
		s, err := r.openApprovals(ctx, req)
		if err != nil {
			return failed(core.FailureAgentError, fmt.Sprintf("the hub could not open the approval socket: %v", err))
		}
		defer s.close()
		socket, self := at.approvals(s)
		args = c.askArgs(args, approvalMCPConfig(self, socket))
	}
	for _, a := range args {
		if len(a) > maxArgLen {
			return failed(core.FailureAgentError, fmt.Sprintf("The prompt is too long for %s, which takes it as a command-line argument: %d bytes, at most %d.", c.name, len(a), maxArgLen))
		}
	}
	stdin := ""
	if c.promptOnStdin {
		stdin = prompt
	}
	p := c.newParser()
	if e, ok := p.(interface{ setEvents(func(core.TurnEvent)) }); ok && req.Events != nil {
		e.setEvents(req.Events)
	}
	if d, ok := p.(interface{ setDenied(func(string) bool) }); ok {
		d.setDenied(denied.has)
	}
	lines := &lineWriter{max: maxLine, fn: p.line}
	st := r.box.Run(ctx, req.WorkspaceID, req.Size, at.wrap(sandbox.Process{Path: path, Args: args, Env: r.turnEnv(req, at.home, env...), Stdin: stdin, Stdout: lines, Grace: r.grace}))
	lines.close()
	t := p.transcript()
	session := t.sessionID
	if session == "" {
		session = req.SessionID
	}

	var res core.TurnResult
	switch {
	case st.StartErr != nil:
		res = startFailure(c.name, st.StartErr)
	case st.Interrupted:
		res = core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: t.reply}
	case st.Limit != "":
		res = limitFailure(st)
	case st.Code != 0:
		res = exitFailure(c.name, st, t.errorText)
	case t.failed:
		msg := t.errorText
		if msg == "" {
			msg = c.name + " reported that the turn failed."
		}
		res = failed(core.FailureAgentError, msg)
	default:
		res = core.TurnResult{Outcome: core.OutcomeCompleted, Reply: t.reply}
	}
	res.SessionID = session
	return res
}

// deniedTools remembers the tool uses (by the ask's key, Claude Code's tool_use_id)
// whose approval was denied, so the output parser can tell a denied tool from one
// that ran: both end with a tool_result in the CLI's stream.
type deniedTools struct{ keys sync.Map }

// watch wraps approve to remember its denials.
func (d *deniedTools) watch(approve func(context.Context, core.ApprovalAsk) core.ApprovalAnswer) func(context.Context, core.ApprovalAsk) core.ApprovalAnswer {
	return func(ctx context.Context, ask core.ApprovalAsk) core.ApprovalAnswer {
		a := approve(ctx, ask)
		if !a.Allow && ask.Key != "" {
			d.keys.Store(ask.Key, true)
		}
		return a
	}
}

func (d *deniedTools) has(key string) bool {
	_, ok := d.keys.Load(key)
	return ok
}
