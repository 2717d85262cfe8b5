package agents_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/agentcli"
	"github.com/wshub/wshub/internal/modelapi"
)

// Real Codex, pointed at the stand-in by the runner's endpoint setting, runs a
// command the model asked for, reports the turn's steps, sends the output back, and a
// second turn resumes the same thread with the first turn's conversation.
func TestRealCodexRunsAToolAndResumesTheSession(t *testing.T) {
	cli := agentcli.Codex(t)
	api := modelapi.New(t)
	r := realRunner(t, cli, api, "")

	// Quotes of both kinds: Codex reports the command shell-quoted inside its own.
	const command = `echo 'hi' > f.txt && echo "written"`
	api.Script(modelapi.Reply{Command: command}, modelapi.Reply{Text: "done"})
	req, ev := realTurn(t, "agent_2", "full-access", "Write hi to f.txt")
	res := r.RunTurn(context.Background(), req)
	if res.Outcome != core.OutcomeCompleted || res.Reply != "done" || res.SessionID == "" {
		t.Fatalf("expected the turn completed with the reply done and a session, got %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(req.Dir, "f.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("expected the tool to write f.txt in the checkout, got %q, %v", b, err)
	}
	results := api.ToolResults()
	if len(results) != 1 || !containsLine(results[0], "written") {
		t.Fatalf("expected Codex to send the command's output, got %q", results)
	}
	want := []string{"tool_started command " + command, "tool_finished command"}
	if got := ev.steps(); !slices.Equal(got, want) {
		t.Fatalf("expected the steps %q, got %q", want, got)
	}
	if got := ev.text(); got != "done" {
		t.Fatalf("expected the text done among the events, got %q", got)
	}
	first := len(api.Main())

	api.Script(modelapi.Reply{Text: "again"})
	next, _ := realTurn(t, "agent_2", "full-access", "Once more")
	next.Dir, next.Home, next.SessionID = req.Dir, req.Home, res.SessionID
	res2 := r.RunTurn(context.Background(), next)
	if res2.Outcome != core.OutcomeCompleted || res2.Reply != "again" || res2.SessionID != res.SessionID {
		t.Fatalf("expected the second turn completed in session %s, got %+v", res.SessionID, res2)
	}
	main := api.Main()
	if len(main) != first+1 {
		t.Fatalf("expected one more conversation request, got %d after %d", len(main), first)
	}
	resumed := main[first]
	if !resumed.ContainsText("Write hi to f.txt") || !resumed.ContainsText("Once more") || !resumed.ContainsText("written") {
		t.Fatalf("expected the resumed request to hold both prompts and the first tool result, got %.2000s", resumed.Body)
	}
	if got := resumed.Header.Get("Session-Id"); got != res.SessionID {
		t.Fatalf("expected the resumed request in session %s, got %q", res.SessionID, got)
	}
}

// A model API error fails a real Codex turn with the API's message, not the response
// body Codex reports it in.
func TestRealCodexAPIErrorFailsTheTurn(t *testing.T) {
	apiError(t, "agent_2", agentcli.Codex(t), "modelapi: no scripted answer left for this request")
}

// Stopping a real Codex turn while its command runs ends every process of the turn
// and the turn is interrupted.
func TestRealCodexStopEndsTheTurnAndItsProcesses(t *testing.T) {
	cli := agentcli.Codex(t)
	api := modelapi.New(t)
	stopMidTool(t, realRunner(t, cli, api, ""), "agent_2", api)
}

// Each runtime mode's flags are accepted by real Codex, and its own sandbox works
// inside the hub's: approval-required (read-only) keeps a command from writing, the
// other modes let it.
func TestRealCodexAcceptsEveryRuntimeMode(t *testing.T) {
	everyMode(t, "agent_2", agentcli.Codex(t), map[string]bool{
		"auto": true, core.ModeApprovalRequired: false, "auto-accept-edits": true,
		"auto-accept-edits-and-bash": true, "full-access": true,
	})
}

// containsLine reports whether text has line as one of its lines.
func containsLine(text, line string) bool {
	for _, l := range splitLines(text) {
		if l == line {
			return true
		}
	}
	return false
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
