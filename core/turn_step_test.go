package core

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A tool's start and end are one step in words, text in pieces is one paragraph, an
// ask and its decision say who decided, and a tool the agents' catalog does not know
// still reads as a sentence.
func TestStepsOf(t *testing.T) {
	input, _ := json.Marshal(map[string]string{"command": "rm -rf build\nrm -rf dist"})
	got := StepsOf([]*TurnEvent{
		{Type: EventToolStarted, Tool: "Bash", Summary: "ls -la"},
		{Type: EventToolFinished, Tool: "Bash"},
		{Type: EventText, Delta: "Now I "},
		{Type: EventText, Delta: "edit it."},
		{Type: EventToolStarted, Tool: "Edit", Summary: "src/app.go"},
		{Type: EventApprovalRequested, Tool: "Bash", Summary: "rm -rf build", Input: input, ApprovalID: "apr_1"},
		{Type: EventApprovalResolved, ApprovalID: "apr_1", Status: ApprovalDenied, Decider: &Author{Name: "Ada"}},
		{Type: EventToolDenied, Tool: "Bash"},
		{Type: EventToolStarted, Tool: "frobnicate"},
		{Type: EventTurnFinished},
	})
	want := []Step{
		{Verb: "Ran", Object: "ls -la"},
		{Text: "Now I edit it."},
		{Verb: "Edited", Object: "src/app.go", Running: true},
		{Verb: "Asked to run Bash", Object: "rm -rf build …"},
		{Verb: "Denied by Ada"},
		{Verb: "Was not allowed to run", Refused: true},
		{Verb: "Used frobnicate", Running: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("expected\n%+v\ngot\n%+v", want, got)
	}
}
