package agents

import (
	"testing"

	"github.com/wshub/wshub/core"
)

const grokSession = "grok-session-8d41b2c7"

func TestGrokArgs(t *testing.T) {
	// Grok CLI has no permission modes: every runtimeMode runs the same way.
	for _, mode := range core.RuntimeModes {
		t.Run(mode, func(t *testing.T) {
			checkArgv(t, "first turn", grokArgs(turn(t, "agent_4", mode, ""), mode, withAttachments),
				[]string{"--format", "json", "--model", "test-model", "--prompt", withAttachments})
			checkArgv(t, "resumed turn", grokArgs(turn(t, "agent_4", mode, grokSession), mode, withAttachments),
				[]string{"--format", "json", "--model", "test-model", "--session", grokSession, "--prompt", withAttachments})
		})
	}
}

func TestGrokEndToEnd(t *testing.T) {
	req := turn(t, "agent_4", "auto-accept-edits-and-bash", "")
	res, f := runFake(t, "grok", printing("grok-json.jsonl", 0), req)
	checkResult(t, res, core.TurnResult{
		Outcome:   core.OutcomeCompleted,
		Reply:     "Fixed `Add` in calc.go (it added 1 too many); the tests pass now.",
		SessionID: grokSession,
	})
	checkArgv(t, "argv", f.argv(), []string{"--format", "json", "--model", "test-model", "--prompt", withAttachments})
	if got := f.stdin(); got != "" {
		t.Errorf("stdin: expected nothing (the prompt is an argument), got %q", got)
	}
}

func TestGrokErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want core.TurnResult
	}{
		{"error event, exit 0", `cat <<'JSONL'
{"type":"step_start","sessionID":"g-1","stepNumber":1,"timestamp":1}
{"type":"error","sessionID":"g-1","message":"Incorrect API key provided","timestamp":2}
JSONL`, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "Incorrect API key provided", SessionID: "g-1"}},
		{"error then answer", `cat <<'JSONL'
{"type":"error","sessionID":"g-1","message":"rate limited, retrying","timestamp":2}
{"type":"text","sessionID":"g-1","stepNumber":1,"text":"Done.","timestamp":3}
JSONL`, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "Done.", SessionID: "g-1"}},
		{"run_finish failure", `cat <<'JSONL'
{"type":"text","sessionID":"g-1","stepNumber":1,"text":"Partial.","timestamp":3}
{"type":"run_finish","sessionID":"g-1","timestamp":4,"success":false,"exitCode":1,"errorCount":1,"lastStepNumber":1}
JSONL`, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "Grok CLI reported that the turn failed.", SessionID: "g-1"}},
		{"old grok without --format", `echo "error: unknown option '--format'" >&2; exit 1`,
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: "error: unknown option '--format'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := runFake(t, "grok", tt.body, turn(t, "agent_4", "full-access", ""))
			checkResult(t, res, tt.want)
		})
	}
}
