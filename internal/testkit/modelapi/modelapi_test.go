package modelapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// post sends body to the server and returns the status and the SSE event names (or
// the body, for an answer that is not a stream).
func post(t *testing.T, s *Server, path, body string) (int, []string, string) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, nil, string(b)
	}
	var events []string
	var data strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, name)
		}
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			if !json.Valid([]byte(d)) {
				t.Fatalf("expected each event's data to be JSON, got %s", d)
			}
			data.WriteString(d)
		}
	}
	return resp.StatusCode, events, data.String()
}

// The stand-in streams each scripted answer as the API does, in order: a tool call
// then text on the Messages API, the same on the Responses API; Claude Code's side
// requests (no tools) take nothing from the script; a request with nothing left to
// answer gets an API error. Every request is recorded, and the tool results the CLIs
// send back are read from both APIs' shapes.
func TestTheStandInAnswersAsScripted(t *testing.T) {
	s := New(t)
	s.Script(Reply{Command: "echo hi"}, Reply{Text: "done"}, Reply{Command: "ls"}, Reply{Text: "listed"})
	const tools = `"tools":[{"name":"Bash"}]`
	tests := []struct {
		path, body string
		status     int
		events     []string
		has        string
	}{
		{"/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}],` + tools + `}`, 200,
			[]string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, `"name":"Bash"`},
		{"/v1/messages", `{"model":"haiku","messages":[{"role":"user","content":"a title"}]}`, 200, nil, `"text":"ok"`},
		{"/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"hi"}]}],` + tools + `}`, 200,
			[]string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}, `"text":"done"`},
		{"/v1/responses", `{"model":"m","stream":true,"input":[],"tools":[{"type":"function","name":"exec_command"}]}`, 200,
			[]string{"response.created", "response.output_item.added", "response.function_call_arguments.delta", "response.output_item.done", "response.completed"}, `"name":"exec_command"`},
		{"/v1/responses", `{"model":"m","stream":true,"input":[{"type":"function_call_output","call_id":"call_1","output":"file"}]}`, 200,
			[]string{"response.created", "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.output_item.done", "response.completed"}, `"text":"listed"`},
		{"/v1/responses", `{"model":"m","stream":true,"input":[]}`, 400, nil, noScript},
	}
	for i, tt := range tests {
		status, events, body := post(t, s, tt.path, tt.body)
		if status != tt.status || !slices.Equal(compact(events), tt.events) || !strings.Contains(body, tt.has) {
			t.Fatalf("request %d: expected %d %v holding %s, got %d %v: %s", i, tt.status, tt.events, tt.has, status, events, body)
		}
	}
	if n, main := len(s.Requests()), len(s.Main()); n != 6 || main != 5 {
		t.Fatalf("expected 6 requests recorded, 5 of the conversation, got %d and %d", n, main)
	}
	if got := s.ToolResults(); !slices.Equal(got, []string{"hi", "file"}) {
		t.Fatalf("expected the tool results of both APIs, got %q", got)
	}
}

// compact drops repeats of an event name in a row (deltas come several at a time).
func compact(names []string) []string { return slices.Compact(slices.Clone(names)) }
