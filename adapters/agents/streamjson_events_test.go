package agents

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// eventsOf feeds a recorded stream-json transcript to the parser and lists the turn
// events it reports, as "type tool summary|delta".
func eventsOf(t *testing.T, file string, p *streamJSON) []string {
	t.Helper()
	var got []string
	p.setEvents(func(e core.TurnEvent) {
		got = append(got, strings.Join(strings.Fields(string(e.Type)+" "+e.Tool+" "+e.Summary+e.Delta), " "))
	})
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		p.line(sc.Bytes())
	}
	return got
}

func TestStreamJSONTurnEvents(t *testing.T) {
	claude := eventsOf(t, "testdata/claude-stream.jsonl", &streamJSON{preferResult: true})
	if len(claude) < 4 || claude[0] != "text I'll run the test suite first to see what fails." ||
		claude[1] != "tool_started Bash go test ./..." || claude[2] != "tool_finished Bash" ||
		!strings.HasPrefix(claude[3], "tool_started Edit /srv/wshub/ws/ws_01JQ7Z/calc.go") {
		t.Fatalf("unexpected Claude Code events: %q", claude)
	}
	cursor := eventsOf(t, "testdata/cursor-stream.jsonl", &streamJSON{})
	var tools []string
	for _, e := range cursor {
		if strings.HasPrefix(e, "tool_") {
			tools = append(tools, e)
		}
	}
	if len(tools) < 2 || tools[0] != "tool_started read calc.go" || tools[1] != "tool_finished read" {
		t.Fatalf("unexpected Cursor events: %q", cursor)
	}
}

func TestCodexTurnEvents(t *testing.T) {
	p := &codexParser{}
	var got []string
	p.setEvents(func(e core.TurnEvent) {
		got = append(got, strings.Join(strings.Fields(string(e.Type)+" "+e.Tool+" "+e.Summary+e.Delta), " "))
	})
	f, err := os.Open("testdata/codex-exec.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p.line(sc.Bytes())
	}
	want := []string{
		"tool_started command go test ./...", "tool_finished command",
		"text The test fails because `Add` adds an extra 1; fixing it.",
		"tool_started file_change /srv/wshub/ws/ws_01JQ7Z/calc.go", "tool_finished file_change",
		"tool_started command go test ./...", "tool_finished command",
		"text Fixed `Add` in `calc.go` (it returned `a + b + 1`); `go test ./...` now passes.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("expected %q, got %q", want, got)
	}
}

// Claude Code reports a failed API call as an assistant message of its own (model
// "<synthetic>", "error" set) before the failed result: the turn fails with the
// result's text, and no event shows it as the model's text. (The lines are real
// Claude Code 2.1.332 output, shortened.)
func TestClaudeAPIErrorIsNotTheModelsText(t *testing.T) {
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s-1"}`,
		`{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","type":"message","content":[{"type":"text","text":"API Error: 400 bad"}]},"parent_tool_use_id":null,"session_id":"s-1","error":"unknown"}`,
		`{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"result":"API Error: 400 bad","session_id":"s-1"}`,
	}
	var got []core.TurnEvent
	p := &streamJSON{preferResult: true}
	p.setEvents(func(e core.TurnEvent) { got = append(got, e) })
	for _, l := range lines {
		p.line([]byte(l))
	}
	if len(got) != 0 {
		t.Fatalf("expected no events, got %+v", got)
	}
	if tr := p.transcript(); !tr.failed || tr.errorText != "API Error: 400 bad" || tr.sessionID != "s-1" {
		t.Fatalf("expected the turn failed with the result's text, got %+v", tr)
	}
}
