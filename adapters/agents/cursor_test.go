package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

const cursorSession = "c6b62c6f-7ead-4fd6-9922-e952131177ff"

func TestCursorArgs(t *testing.T) {
	base := []string{"--print", "--output-format", "stream-json", "--trust", "--model", "test-model"}
	tests := []struct {
		mode  string
		perms []string
	}{
		{"auto", []string{"--force", "--sandbox", "enabled"}},
		{"approval-required", nil},
		{"auto-accept-edits", []string{"--force", "--sandbox", "enabled"}},
		{"auto-accept-edits-and-bash", []string{"--force", "--sandbox", "disabled"}},
		{"full-access", []string{"--force", "--sandbox", "disabled", "--approve-mcps"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			want := append(append([]string{}, base...), tt.perms...)
			checkArgv(t, "first turn", cursorArgs(turn(t, "agent_3", tt.mode, ""), tt.mode, withAttachments),
				append(append([]string{}, want...), "--", withAttachments))
			checkArgv(t, "resumed turn", cursorArgs(turn(t, "agent_3", tt.mode, cursorSession), tt.mode, withAttachments),
				append(append([]string{}, want...), "--resume", cursorSession, "--", withAttachments))
		})
	}
}

func TestCursorPromptArgument(t *testing.T) {
	req := turn(t, "agent_3", "full-access", "")
	for prompt, want := range map[string]string{
		"- fix a\n- fix b": "- fix a\n- fix b", // after "--": not an option
		"status":           "status\n",         // one word: not the status command
		"":                 "\n",
		"explain main.go":  "explain main.go",
	} {
		args := cursorArgs(req, "full-access", prompt)
		if got := args[len(args)-2:]; got[0] != "--" || got[1] != want {
			t.Errorf("prompt %q: expected [-- %q] at the end, got %q", prompt, want, got)
		}
	}
}

func TestCursorEndToEnd(t *testing.T) {
	req := turn(t, "agent_3", "auto", cursorSession)
	res, f := runFake(t, "cursor-agent", printing("cursor-stream.jsonl", 0), req)
	checkResult(t, res, core.TurnResult{
		Outcome:   core.OutcomeCompleted,
		Reply:     "Fixed `Add` in `calc.go`: it returned `a + b + 1`, now `a + b`.",
		SessionID: cursorSession,
	})
	checkArgv(t, "argv", f.argv(), []string{"--print", "--output-format", "stream-json", "--trust", "--model", "test-model",
		"--force", "--sandbox", "enabled", "--resume", cursorSession, "--", withAttachments})
	if got := f.stdin(); got != "" {
		t.Errorf("stdin: expected nothing (the prompt is an argument), got %q", got)
	}
}

func TestCursorResultWithoutAssistantMessages(t *testing.T) {
	body := `cat <<'JSONL'
{"type":"system","subtype":"init","session_id":"c-2"}
{"type":"result","subtype":"success","is_error":false,"result":"Only the result.","session_id":"c-2"}
JSONL`
	res, _ := runFake(t, "cursor-agent", body, turn(t, "agent_3", "auto", ""))
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "Only the result.", SessionID: "c-2"})
}

func TestPromptTooLongForArgv(t *testing.T) {
	req := turn(t, "agent_3", "full-access", "")
	req.Prompt = strings.Repeat("é", maxArgLen/2+1) // 2 bytes each: over the limit
	res, f := runFake(t, "cursor-agent", "echo should-not-run", req)
	if res.Outcome != core.OutcomeError || res.FailureCode != core.FailureAgentError || !strings.Contains(res.FailureMessage, "too long") {
		t.Errorf("expected error/agent_error saying the prompt is too long, got %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.record, "argv")); err == nil {
		t.Error("the CLI was started with an oversized argument")
	}
}
