package modelapi

import (
	"encoding/json"
	"net/http"
)

// Anthropic's Messages API (https://docs.anthropic.com/en/api/messages-streaming):
// POST /v1/messages, answered as a stream of message_start, content_block_start /
// _delta / _stop per block (text_delta for text, input_json_delta for a tool use's
// input), message_delta (the stop reason) and message_stop; or, without "stream",
// as one message.

// MessagesRequest is the part of a Messages request the stand-in reads.
type MessagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// ContentBlock is a block of a message's content.
type ContentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content is a tool result's: a string, or a list of text blocks.
	Content json.RawMessage `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
}

// Blocks decodes the content of every message (a plain string is one text block).
func (m MessagesRequest) Blocks() []ContentBlock {
	var out []ContentBlock
	for _, msg := range m.Messages {
		var s string
		if json.Unmarshal(msg.Content, &s) == nil {
			out = append(out, ContentBlock{Type: "text", Text: s})
			continue
		}
		var blocks []ContentBlock
		_ = json.Unmarshal(msg.Content, &blocks)
		out = append(out, blocks...)
	}
	return out
}

// ToolResultText is a tool result's text, whichever form its content takes.
func (b ContentBlock) ToolResultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var parts []ContentBlock
	_ = json.Unmarshal(b.Content, &parts)
	for _, p := range parts {
		s += p.Text
	}
	return s
}

// mainMessages tells a conversation request from Claude Code's side requests (a
// title, a quota probe): only the conversation offers tools.
func mainMessages(body []byte) bool {
	var m MessagesRequest
	return json.Unmarshal(body, &m) == nil && len(m.Tools) > 0
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	req, rep, ok := s.record(r, mainMessages)
	var m MessagesRequest
	_ = req.JSON(&m)
	if !req.Main {
		// A side request: a short answer, whatever it asked.
		rep = Reply{Text: "ok"}
	}
	if !ok {
		unscripted(w, `{"type":"error","error":{"type":"invalid_request_error","message":"`+noScript+`"}}`)
		return
	}
	if !s.hold(r.Context(), rep) {
		return
	}
	var blocks []ContentBlock
	if rep.Text != "" || rep.Command == "" {
		blocks = append(blocks, ContentBlock{Type: "text", Text: rep.Text})
	}
	stop := "end_turn"
	if rep.Command != "" {
		input, _ := json.Marshal(map[string]string{"command": rep.Command, "description": "Run the command"})
		blocks = append(blocks, ContentBlock{Type: "tool_use", ID: s.id("toolu"), Name: "Bash", Input: input})
		stop = "tool_use"
	}
	msg := map[string]any{"id": s.id("msg"), "type": "message", "role": "assistant", "model": m.Model,
		"stop_reason": nil, "stop_sequence": nil, "content": []any{},
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}
	if !m.Stream {
		msg["content"], msg["stop_reason"] = blocks, stop
		msg["usage"] = map[string]int{"input_tokens": 10, "output_tokens": 5}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(msg)
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range blocks {
		switch b.Type {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]string{"type": "text", "text": ""}})
			for _, c := range chunks(b.Text) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "text_delta", "text": c}})
			}
		case "tool_use":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}})
			for _, c := range chunks(string(b.Input)) {
				e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "input_json_delta", "partial_json": c}})
			}
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}})
	e.event("message_stop", map[string]string{"type": "message_stop"})
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"input_tokens":10}`))
}

// claudeToolResults are the tool results in a Messages request, by tool use id.
func claudeToolResults(r Request) (ids, texts []string) {
	var m MessagesRequest
	if r.JSON(&m) != nil {
		return nil, nil
	}
	for _, b := range m.Blocks() {
		if b.Type == "tool_result" {
			ids, texts = append(ids, b.ToolUseID), append(texts, b.ToolResultText())
		}
	}
	return ids, texts
}
