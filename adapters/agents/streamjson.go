package agents

import (
	"encoding/json"
	"strings"

	"github.com/wshub/wshub/core"
)

// streamJSON follows the "stream-json" output that Claude Code and Cursor Agent share
// (one JSON object per line):
//
//	{"type":"system","subtype":"init","session_id":"…",…}
//	{"type":"assistant","message":{"content":[{"type":"text","text":"…"},{"type":"tool_use",…}]},"parent_tool_use_id":null,"session_id":"…"}
//	{"type":"user","message":{"content":[{"type":"tool_result",…}]},"session_id":"…"}
//	{"type":"tool_call","subtype":"started"|"completed",…}             (Cursor)
//	{"type":"result","subtype":"success","is_error":false,"result":"…","session_id":"…"}
//
// The answer is the top-level assistant text after the last tool activity (a tool
// use, a tool result, a Cursor tool_call); a subagent's messages (parent_tool_use_id
// set) are not the answer. The session is the last session_id seen.
type streamJSON struct {
	// preferResult takes the result event's text as the reply when there is one:
	// Claude Code's result is the final message, whereas Cursor's is every message of
	// the turn concatenated.
	preferResult bool

	sessionID string
	answer    strings.Builder
	hasResult bool
	result    string
	isError   bool
	errorText string
	// events, when set, is told the turn's steps (tool uses and results, text).
	events func(core.TurnEvent)
	// tools names the open tool uses by id, for tool_finished.
	tools map[string]string
	// denied, when set, says whether a tool use (by id) was denied its approval: its
	// result then ends it as tool_denied, since the tool never ran.
	denied func(toolUseID string) bool
}

func (s *streamJSON) setEvents(fn func(core.TurnEvent)) { s.events = fn }

func (s *streamJSON) setDenied(fn func(string) bool) { s.denied = fn }

func (s *streamJSON) emit(e core.TurnEvent) {
	if s.events != nil {
		s.events(e)
	}
}

type streamEvent struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Message         *streamMessage  `json:"message"`
	Result          *string         `json:"result"`
	IsError         bool            `json:"is_error"`
	Errors          json.RawMessage `json:"errors"`
	ToolCall        json.RawMessage `json:"tool_call"`
	// Error marks an assistant message Claude Code made up to report a failed API call
	// ("API Error: 400 …", model "<synthetic>"): not the model's words.
	Error json.RawMessage `json:"error"`
}

type streamMessage struct {
	// Content is a list of blocks, or (user messages) sometimes a plain string.
	Content json.RawMessage `json:"content"`
}

type streamBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// toolSummary picks what says most of a tool's input: the command, the file, the
// pattern, the URL, or the description.
func toolSummary(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	return inputSummary(in)
}

// inputSummary is toolSummary of a decoded input.
func inputSummary(in map[string]any) string {
	for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description"} {
		if v, ok := in[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// cursorTool reads a Cursor tool_call: {"readToolCall":{"args":{"path":…}}} gives
// ("read", "calc.go").
func cursorTool(raw json.RawMessage) (name, summary string) {
	var calls map[string]struct {
		Args json.RawMessage `json:"args"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		return "", ""
	}
	for k, c := range calls {
		return strings.TrimSuffix(k, "ToolCall"), toolSummary(c.Args)
	}
	return "", ""
}

func (s *streamJSON) line(b []byte) {
	var ev streamEvent
	if json.Unmarshal(b, &ev) != nil {
		return // not an event (a stray log line): ignored
	}
	if ev.SessionID != "" {
		s.sessionID = ev.SessionID
	}
	subagent := ev.ParentToolUseID != nil && *ev.ParentToolUseID != ""
	switch ev.Type {
	case "assistant":
		if subagent || ev.Message == nil || len(ev.Error) > 0 && string(ev.Error) != "null" {
			return // the failure reaches the turn through the result event
		}
		var blocks []streamBlock
		if json.Unmarshal(ev.Message.Content, &blocks) != nil {
			return
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				s.answer.WriteString(bl.Text)
				s.emit(core.TurnEvent{Type: core.EventText, Delta: bl.Text})
			case "tool_use":
				s.answer.Reset()
				if s.tools == nil {
					s.tools = map[string]string{}
				}
				s.tools[bl.ID] = bl.Name
				s.emit(core.TurnEvent{Type: core.EventToolStarted, Tool: bl.Name, Summary: toolSummary(bl.Input)})
			}
		}
	case "user", "tool_call":
		if !subagent {
			s.answer.Reset()
		}
		if subagent {
			return
		}
		if ev.Type == "tool_call" {
			name, summary := cursorTool(ev.ToolCall)
			switch ev.Subtype {
			case "started":
				s.emit(core.TurnEvent{Type: core.EventToolStarted, Tool: name, Summary: summary})
			case "completed":
				s.emit(core.TurnEvent{Type: core.EventToolFinished, Tool: name})
			}
			return
		}
		var blocks []streamBlock
		if ev.Message != nil && json.Unmarshal(ev.Message.Content, &blocks) == nil {
			for _, bl := range blocks {
				if bl.Type != "tool_result" {
					continue
				}
				end := core.EventToolFinished
				if s.denied != nil && s.denied(bl.ToolUseID) {
					end = core.EventToolDenied
				}
				s.emit(core.TurnEvent{Type: end, Tool: s.tools[bl.ToolUseID]})
			}
		}
	case "result":
		s.hasResult = true
		if ev.Result != nil {
			s.result = *ev.Result
		}
		s.isError = ev.IsError
		if ev.IsError {
			s.errorText = s.result
			if s.errorText == "" {
				s.errorText = joinErrors(ev.Errors)
			}
			if s.errorText == "" {
				s.errorText = "the agent reported " + ev.Subtype
			}
		}
	}
}

// joinErrors renders a result's "errors" list (strings, or objects) as one text.
func joinErrors(raw json.RawMessage) string {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	texts := make([]string, 0, len(items))
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			texts = append(texts, s)
			continue
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(it, &obj) == nil && obj.Message != "" {
			texts = append(texts, obj.Message)
			continue
		}
		texts = append(texts, string(it))
	}
	return strings.Join(texts, "\n")
}

func (s *streamJSON) transcript() transcript {
	t := transcript{sessionID: s.sessionID, reply: s.answer.String(), failed: s.isError, errorText: s.errorText}
	if s.isError {
		t.reply = ""
		return t
	}
	if s.hasResult && (s.preferResult || t.reply == "") {
		t.reply = s.result
	}
	return t
}
