package agents

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wshub/wshub/core"
)

// codexCLI drives Codex (agent_2) through its non-interactive exec command:
//
//	codex exec --json --skip-git-repo-check [--model=M] <sandbox> -
//	codex exec --json --skip-git-repo-check [--model=M] <sandbox> resume SESSION -
//
// "-" makes exec read the prompt from standard input. The options stand before
// "resume": exec's own options apply to the resumed session (a resumed session keeps
// only its conversation, not its settings), and --sandbox is not accepted after it.
// --model=M keeps a model name that starts with "-" from being read as a flag.
//
// codex exec never asks for approval (its approval policy is "never"), so runtimeMode
// maps to the sandbox that bounds what it may do unasked:
//
//	auto                        --sandbox workspace-write (Codex's own "Auto" preset)
//	approval-required           --sandbox read-only (nothing that would need approval
//	                            can happen)
//	auto-accept-edits           --sandbox workspace-write
//	auto-accept-edits-and-bash  --sandbox workspace-write
//	                            -c sandbox_workspace_write.network_access=true
//	full-access                 --dangerously-bypass-approvals-and-sandbox
//
// Output (--json) is one event per line: thread.started carries the thread id (the
// session, on a resumed thread too), item.completed with an agent_message item carries
// an answer (the last one is the reply), turn.failed carries the error of a failed
// turn, and error events carry errors (some retried).
//
// With another endpoint (an LLM gateway, WSHUB_CODEX_BASE_URL) the turn defines a
// model provider and picks it, with -c options rather than a config.toml in the
// workspace's home: the agent can write there, and a file it changed would point
// later turns elsewhere. Codex reads the endpoint from a provider only (not from
// OPENAI_BASE_URL), with the key in OPENAI_API_KEY:
//
//	-c model_provider="wshub"
//	-c model_providers.wshub={name="wshub",base_url="URL",wire_api="responses",env_key="OPENAI_API_KEY"}
var codexCLI = agentCLI{
	name:          core.AgentProduct("agent_2"),
	program:       Programs["agent_2"],
	args:          codexArgs,
	promptOnStdin: true,
	newParser:     func() outputParser { return &codexParser{} },
	endpoint:      codexEndpoint,
}

// codexProvider names the model provider a turn with another endpoint defines.
const codexProvider = "wshub"

// codexEndpoint puts the provider options right after "exec", before "resume" (they
// apply to the resumed session too).
func codexEndpoint(args []string, baseURL string) ([]string, []string) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a TOML basic string
	provider := fmt.Sprintf("model_providers.%s={name=%s,base_url=%s,wire_api=%s,env_key=%s}",
		codexProvider, q(codexProvider), q(baseURL), q("responses"), q("OPENAI_API_KEY"))
	out := append([]string{args[0], "-c", "model_provider=" + q(codexProvider), "-c", provider}, args[1:]...)
	return nil, out
}

func codexArgs(req core.TurnRequest, mode, _ string) []string {
	args := []string{"exec", "--json", "--skip-git-repo-check"}
	if req.Model != "" {
		args = append(args, "--model="+req.Model)
	}
	switch mode {
	case "auto", "auto-accept-edits":
		args = append(args, "--sandbox", "workspace-write")
	case "approval-required":
		args = append(args, "--sandbox", "read-only")
	case "auto-accept-edits-and-bash":
		args = append(args, "--sandbox", "workspace-write", "-c", "sandbox_workspace_write.network_access=true")
	case "full-access":
		args = append(args, "--dangerously-bypass-approvals-and-sandbox")
	}
	if req.SessionID != "" {
		args = append(args, "resume", req.SessionID)
	}
	return append(args, "-")
}

type codexParser struct {
	threadID  string
	reply     string
	failed    bool
	failure   string
	lastError string
	events    func(core.TurnEvent)
}

func (p *codexParser) setEvents(fn func(core.TurnEvent)) { p.events = fn }

// event reports a step: a command started or done, a file change, a message.
func (p *codexParser) event(started bool, item *codexItem) {
	if p.events == nil || item == nil {
		return
	}
	switch {
	case item.Type == "command_execution" && started:
		p.events(core.TurnEvent{Type: core.EventToolStarted, Tool: "command", Summary: shellCommand(item.Command)})
	case item.Type == "command_execution":
		p.events(core.TurnEvent{Type: core.EventToolFinished, Tool: "command"})
	case item.Type == "file_change" && !started:
		summary := ""
		if len(item.Changes) > 0 {
			summary = item.Changes[0].Path
		}
		p.events(core.TurnEvent{Type: core.EventToolStarted, Tool: "file_change", Summary: summary})
		p.events(core.TurnEvent{Type: core.EventToolFinished, Tool: "file_change"})
	case item.Type == "agent_message" && !started:
		p.events(core.TurnEvent{Type: core.EventText, Delta: item.Text})
	}
}

type codexItem struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Command string `json:"command"`
	Changes []struct {
		Path string `json:"path"`
	} `json:"changes"`
}

type codexEvent struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Item     *codexItem `json:"item"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

func (p *codexParser) line(b []byte) {
	var ev codexEvent
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "thread.started":
		if ev.ThreadID != "" {
			p.threadID = ev.ThreadID
		}
	case "item.started":
		p.event(true, ev.Item)
	case "item.completed":
		if ev.Item != nil && ev.Item.Type == "agent_message" {
			p.reply = ev.Item.Text
		}
		p.event(false, ev.Item)
	case "turn.failed":
		p.failed = true
		if ev.Error != nil {
			p.failure = ev.Error.Message
		}
	case "error":
		p.lastError = ev.Message
	}
}

func (p *codexParser) transcript() transcript {
	t := transcript{sessionID: p.threadID, reply: p.reply, failed: p.failed, errorText: p.failure}
	if t.errorText == "" {
		t.errorText = p.lastError
	}
	t.errorText = apiErrorMessage(t.errorText)
	if p.failed {
		t.reply = ""
	}
	return t
}

// apiErrorMessage is the message of an API error Codex reports as the response body
// it got, `{"error":{"message":"…","type":"…"}}` (OpenAI's shape, which gateways
// copy); any other text is returned as it is.
func apiErrorMessage(s string) string {
	var body struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(s), &body) != nil || body.Error == nil || strings.TrimSpace(body.Error.Message) == "" {
		return s
	}
	return body.Error.Message
}

// shellCommand is the command the model asked for in a command_execution item's
// command, which Codex reports as the whole argv it ran, shell-quoted:
// `/bin/bash -lc 'echo hi > f.txt'`. Anything else is returned as it is.
func shellCommand(s string) string {
	words, ok := shellWords(s)
	if !ok || len(words) != 3 || words[1] != "-lc" && words[1] != "-c" {
		return s
	}
	switch filepath.Base(words[0]) {
	case "bash", "sh", "zsh", "dash":
		return words[2]
	}
	return s
}

// shellWords splits s as a POSIX shell does words: blanks separate, single quotes
// keep everything, double quotes keep everything but \ before $ ` " \ and newline, a
// backslash outside quotes keeps the next character. ok is false for an unterminated
// quote.
func shellWords(s string) (words []string, ok bool) {
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, false
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words, true
}
