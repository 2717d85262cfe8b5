package agents

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

const claudeSession = "6f1c3b8e-2d4a-4c9e-9b71-0e5f2a7d8c13"

func TestClaudeArgs(t *testing.T) {
	base := []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "test-model"}
	tests := []struct {
		mode  string
		perms []string
	}{
		{"auto", []string{"--permission-mode", "auto"}},
		{"approval-required", []string{"--permission-mode", "dontAsk"}},
		{"auto-accept-edits", []string{"--permission-mode", "acceptEdits"}},
		{"auto-accept-edits-and-bash", []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash"}},
		{"full-access", []string{"--dangerously-skip-permissions"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			first := turn(t, "agent_1", tt.mode, "")
			want := append(append([]string{}, base...), tt.perms...)
			checkArgv(t, "first turn", claudeArgs(first, tt.mode, withAttachments), want)

			resume := turn(t, "agent_1", tt.mode, claudeSession)
			want = append(want, "--resume", claudeSession)
			checkArgv(t, "resumed turn", claudeArgs(resume, tt.mode, withAttachments), want)
		})
	}
	t.Run("no model", func(t *testing.T) {
		req := turn(t, "agent_1", "full-access", "")
		req.Model = ""
		checkArgv(t, "without a model", claudeArgs(req, "full-access", ""),
			[]string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"})
	})
}

func TestClaudeEndToEnd(t *testing.T) {
	req := turn(t, "agent_1", "auto-accept-edits", "0e9d8c7b-previous")
	res, f := runFake(t, "claude", printing("claude-stream.jsonl", 0), req)
	checkResult(t, res, core.TurnResult{
		Outcome:   core.OutcomeCompleted,
		Reply:     "Fixed: `Add` added an extra 1. It now returns `a + b`, and `go test ./...` passes.",
		SessionID: claudeSession,
	})
	checkArgv(t, "argv", f.argv(), []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "test-model",
		"--permission-mode", "acceptEdits", "--resume", "0e9d8c7b-previous"})
	if got := f.stdin(); got != withAttachments {
		t.Errorf("stdin: expected %q, got %q", withAttachments, got)
	}
}

// claudeResult runs the fake claude printing out and exiting with code.
func claudeResult(t *testing.T, out string, code int, session string) core.TurnResult {
	t.Helper()
	body := "cat <<'EOF'\n" + out + "\nEOF\nexit " + strconv.Itoa(code)
	res, _ := runFake(t, "claude", body, turn(t, "agent_1", "full-access", session))
	return res
}

func TestClaudeOutputs(t *testing.T) {
	init := `{"type":"system","subtype":"init","session_id":"s-1","model":"m"}`
	tests := []struct {
		name    string
		out     string
		code    int
		session string
		want    core.TurnResult
	}{
		{"is_error result", init + "\n" +
			`{"type":"result","subtype":"success","is_error":true,"result":"Invalid API key · Please run /login","session_id":"s-1"}`, 1, "",
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "Invalid API key · Please run /login", SessionID: "s-1"}},
		{"is_error with exit 0", init + "\n" +
			`{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 Overloaded","session_id":"s-1"}`, 0, "",
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "API Error: 529 Overloaded", SessionID: "s-1"}},
		{"error subtype with errors list", init + "\n" +
			`{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (3)"],"session_id":"s-1"}`, 1, "",
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "Reached maximum number of turns (3)", SessionID: "s-1"}},
		{"subagent text is not the answer", init + "\n" +
			`{"type":"assistant","message":{"content":[{"type":"text","text":"main answer"}]},"parent_tool_use_id":null,"session_id":"s-1"}` + "\n" +
			`{"type":"assistant","message":{"content":[{"type":"text","text":"subagent chatter"}]},"parent_tool_use_id":"toolu_1","session_id":"s-1"}`, 0, "",
			core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "main answer", SessionID: "s-1"}},
		{"crash before init keeps the resumed session", "", 1, "old-session",
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "Claude Code exited with code 1.", SessionID: "old-session"}},
		{"stray non-JSON lines are ignored", "Warning: something\n" + init + "\n" +
			`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-2"}`, 0, "",
			core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "done", SessionID: "s-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkResult(t, claudeResult(t, tt.out, tt.code, tt.session), tt.want)
		})
	}
}

func TestClaudeInterruptedKeepsAnswerSoFar(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready")
	body := `cat <<'JSONL'
{"type":"system","subtype":"init","session_id":"s-9"}
{"type":"assistant","message":{"content":[{"type":"text","text":"Working on it: step one done."}]},"parent_tool_use_id":null,"session_id":"s-9"}
JSONL
touch ` + shQuote(ready) + `
sleep 60`
	f := newFakeCLI(t, "claude", body)
	ctx := cancelWhenReady(t, ready)
	done := make(chan core.TurnResult, 1)
	go func() { done <- unsandboxed(t, nil, f.lookPath).RunTurn(ctx, turn(t, "agent_1", "auto", "")) }()
	waitForFile(t, ready)
	select {
	case res := <-done:
		checkResult(t, res, core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: "Working on it: step one done.", SessionID: "s-9"})
	case <-time.After(10 * time.Second):
		t.Fatal("RunTurn did not return within 10s of the cancel")
	}
}

func TestCLINotInstalled(t *testing.T) {
	for _, id := range core.AgentIDs {
		t.Run(id, func(t *testing.T) {
			empty := newFakeCLI(t, "unrelated-program", "")
			res := unsandboxed(t, nil, empty.lookPath).RunTurn(context.Background(), turn(t, id, "full-access", ""))
			if res.Outcome != core.OutcomeError || res.FailureCode != core.FailureAgentNotInstalled {
				t.Fatalf("expected error/agent_not_installed, got %+v", res)
			}
			if !strings.Contains(res.FailureMessage, `"`+Programs[id]+`"`) {
				t.Errorf("message should name the program %q: %q", Programs[id], res.FailureMessage)
			}
		})
	}
}
