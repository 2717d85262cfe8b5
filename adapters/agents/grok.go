package agents

import (
	"encoding/json"
	"strings"

	"github.com/wshub/wshub/core"
)

// grokCLI drives Grok CLI (agent_4, the open-source superagent-ai/grok-cli, npm
// package grok-dev) in headless mode:
//
//	grok --format json [--model M] [--session SESSION] --prompt PROMPT
//
// Headless mode takes the prompt only as the value of --prompt (which takes the next
// argument whatever it starts with). It has no permission modes: every tool call is
// approved. So every runtimeMode gives the same arguments; docs/agents.md says so.
//
// Output (--format json) is one event per line, each with the session in "sessionID":
// step_start, text (assistant text of a step), tool_use (a tool call and its result),
// step_finish, error. The reply is the assistant text after the last tool use.
var grokCLI = agentCLI{
	name:      core.AgentProduct("agent_4"),
	program:   Programs["agent_4"],
	args:      grokArgs,
	newParser: func() outputParser { return &grokParser{} },
}

func grokArgs(req core.TurnRequest, _, prompt string) []string {
	args := []string{"--format", "json"}
	if req.Model != "" {
		args = append(args, "--model", req.Model)
	}
	if req.SessionID != "" {
		args = append(args, "--session", req.SessionID)
	}
	return append(args, "--prompt", prompt)
}

type grokParser struct {
	sessionID string
	answer    strings.Builder
	errorText string
	finished  *bool // run_finish's success, when the CLI reports one
}

type grokEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Text      string `json:"text"`
	Message   string `json:"message"`
	Success   *bool  `json:"success"`
}

func (p *grokParser) line(b []byte) {
	var ev grokEvent
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	if ev.SessionID != "" {
		p.sessionID = ev.SessionID
	}
	switch ev.Type {
	case "text":
		p.answer.WriteString(ev.Text)
	case "tool_use":
		p.answer.Reset()
	case "error":
		p.errorText = ev.Message
	case "run_finish":
		p.finished = ev.Success
	}
}

func (p *grokParser) transcript() transcript {
	t := transcript{sessionID: p.sessionID, reply: p.answer.String(), errorText: p.errorText}
	// A run that reports failure, or errs without answering, failed even if the
	// process exited 0.
	if (p.finished != nil && !*p.finished) || (p.errorText != "" && t.reply == "") {
		t.failed, t.reply = true, ""
	}
	return t
}
