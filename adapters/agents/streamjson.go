package agents

import (
	"encoding/json"
	"strings"
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
}

type streamMessage struct {
	// Content is a list of blocks, or (user messages) sometimes a plain string.
	Content json.RawMessage `json:"content"`
}

type streamBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
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
		if subagent || ev.Message == nil {
			return
		}
		var blocks []streamBlock
		if json.Unmarshal(ev.Message.Content, &blocks) != nil {
			return
		}
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				s.answer.WriteString(bl.Text)
			case "tool_use":
				s.answer.Reset()
			}
		}
	case "user", "tool_call":
		if !subagent {
			s.answer.Reset()
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
