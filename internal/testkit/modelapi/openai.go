package modelapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// OpenAI's Responses API (https://platform.openai.com/docs/api-reference/responses-streaming):
// POST /v1/responses with "stream": true, answered as response.created, then per
// output item response.output_item.added, its deltas (response.output_text.delta,
// response.function_call_arguments.delta) and response.output_item.done, then
// response.completed with the whole response.

// ResponsesRequest is the part of a Responses request the stand-in reads.
type ResponsesRequest struct {
	Model string          `json:"model"`
	Input []ResponsesItem `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// ResponsesItem is an item of a request's input.
type ResponsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
	CallID  string          `json:"call_id,omitempty"`
	Name    string          `json:"name,omitempty"`
	// Output is a function call output's: a string, or a list of content items.
	Output json.RawMessage `json:"output,omitempty"`
}

// OutputText is a function call output's text.
func (it ResponsesItem) OutputText() string {
	var s string
	if json.Unmarshal(it.Output, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(it.Output, &parts)
	for _, p := range parts {
		s += p.Text
	}
	return s
}

// shellCall is the call of the shell tool the request offers that runs command:
// Codex offers one of several, by model and version.
func (q ResponsesRequest) shellCall(command string) (name, args string) {
	var names []string
	for _, t := range q.Tools {
		names = append(names, t.Name)
	}
	var a any
	switch {
	case slices.Contains(names, "shell_command"):
		name, a = "shell_command", map[string]any{"command": command}
	case slices.Contains(names, "exec_command"):
		name, a = "exec_command", map[string]any{"cmd": command}
	default:
		name, a = "shell", map[string]any{"command": []string{"bash", "-lc", command}}
	}
	b, _ := json.Marshal(a)
	return name, string(b)
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	req, rep, ok := s.record(r, func([]byte) bool { return true })
	if !ok {
		unscripted(w, `{"error":{"type":"invalid_request_error","code":null,"param":null,"message":"`+noScript+`"}}`)
		return
	}
	if !s.hold(r.Context(), rep) {
		return
	}
	var q ResponsesRequest
	_ = req.JSON(&q)
	respID := s.id("resp")
	resp := map[string]any{"id": respID, "object": "response", "created_at": time.Now().Unix(),
		"status": "in_progress", "model": q.Model, "output": []any{}}
	e := newSSE(w)
	e.event("response.created", map[string]any{"type": "response.created", "response": resp})
	var output []any
	if rep.Command != "" {
		name, args := q.shellCall(rep.Command)
		id, call := s.id("fc"), s.id("call")
		item := map[string]any{"type": "function_call", "id": id, "call_id": call, "name": name, "arguments": "", "status": "in_progress"}
		i := len(output)
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		for _, c := range chunks(args) {
			e.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta",
				"item_id": id, "output_index": i, "delta": c})
		}
		done := map[string]any{"type": "function_call", "id": id, "call_id": call, "name": name, "arguments": args, "status": "completed"}
		e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": done})
		output = append(output, done)
	}
	if rep.Text != "" || rep.Command == "" {
		id, i := s.id("msg"), len(output)
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i,
			"item": map[string]any{"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []any{}}})
		e.event("response.content_part.added", map[string]any{"type": "response.content_part.added", "item_id": id,
			"output_index": i, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, c := range chunks(rep.Text) {
			e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": id,
				"output_index": i, "content_index": 0, "delta": c})
		}
		e.event("response.output_text.done", map[string]any{"type": "response.output_text.done", "item_id": id,
			"output_index": i, "content_index": 0, "text": rep.Text})
		done := map[string]any{"type": "message", "id": id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}}
		e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": done})
		output = append(output, done)
	}
	resp["status"], resp["output"] = "completed", output
	resp["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 15}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": resp})
}

// codexToolResults are the function call outputs in a Responses request, by call id.
func codexToolResults(r Request) (ids, texts []string) {
	var q ResponsesRequest
	if r.JSON(&q) != nil {
		return nil, nil
	}
	for _, it := range q.Input {
		if it.Type == "function_call_output" {
			ids, texts = append(ids, it.CallID), append(texts, it.OutputText())
		}
	}
	return ids, texts
}
