package agents

import (
	"encoding/json"
	"testing"

	"github.com/wshub/wshub/core"
)

const codexThread = "0199a213-81c0-7800-8aa1-bbab2a035a53"

func TestCodexArgs(t *testing.T) {
	base := []string{"exec", "--json", "--skip-git-repo-check", "--model=test-model"}
	tests := []struct {
		mode  string
		perms []string
	}{
		{"auto", []string{"--sandbox", "workspace-write"}},
		{"approval-required", []string{"--sandbox", "read-only"}},
		{"auto-accept-edits", []string{"--sandbox", "workspace-write"}},
		{"auto-accept-edits-and-bash", []string{"--sandbox", "workspace-write", "-c", "sandbox_workspace_write.network_access=true"}},
		{"full-access", []string{"--dangerously-bypass-approvals-and-sandbox"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			want := append(append([]string{}, base...), tt.perms...)
			checkArgv(t, "first turn", codexArgs(turn(t, "agent_2", tt.mode, ""), tt.mode, withAttachments),
				append(append([]string{}, want...), "-"))
			checkArgv(t, "resumed turn", codexArgs(turn(t, "agent_2", tt.mode, codexThread), tt.mode, withAttachments),
				append(append([]string{}, want...), "resume", codexThread, "-"))
		})
	}
}

func TestCodexEndToEnd(t *testing.T) {
	req := turn(t, "agent_2", "approval-required", codexThread)
	res, f := runFake(t, "codex", printing("codex-exec.jsonl", 0), req)
	checkResult(t, res, core.TurnResult{
		Outcome:   core.OutcomeCompleted,
		Reply:     "Fixed `Add` in `calc.go` (it returned `a + b + 1`); `go test ./...` now passes.",
		SessionID: codexThread,
	})
	checkArgv(t, "argv", f.argv(), []string{"exec", "--json", "--skip-git-repo-check", "--model=test-model",
		"--sandbox", "read-only", "resume", codexThread, "-"})
	if got := f.stdin(); got != withAttachments {
		t.Errorf("stdin: expected %q, got %q", withAttachments, got)
	}
}

func TestCodexFailures(t *testing.T) {
	tests := []struct {
		name string
		body string
		want core.TurnResult
	}{
		{"turn.failed", `cat <<'JSONL'
{"type":"thread.started","thread_id":"t-1"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Missing bearer authentication in header"}}
JSONL
exit 1`, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError,
			FailureMessage: "unexpected status 401 Unauthorized: Missing bearer authentication in header", SessionID: "t-1"}},
		{"error event only", `echo '{"type":"error","message":"stream disconnected before completion"}'; exit 1`,
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError,
				FailureMessage: "stream disconnected before completion", SessionID: "resumed"}},
		{"stderr only", `echo "Not inside a trusted directory and --skip-git-repo-check was not specified." >&2; exit 1`,
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError,
				FailureMessage: "Not inside a trusted directory and --skip-git-repo-check was not specified.", SessionID: "resumed"}},
		{"interpreter missing", `echo "/usr/bin/env: 'node': No such file or directory" >&2; exit 127`,
			core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentNotInstalled,
				FailureMessage: "/usr/bin/env: 'node': No such file or directory", SessionID: "resumed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := runFake(t, "codex", tt.body, turn(t, "agent_2", "full-access", "resumed"))
			checkResult(t, res, tt.want)
		})
	}
}

// Codex reports a command as the argv it ran, shell-quoted; the turn's step shows
// the command the model asked for, and anything that is not a shell's -c is shown as
// it came.
func TestCodexStepShowsTheCommandInsideTheShell(t *testing.T) {
	tests := []struct{ reported, want string }{
		{`/bin/bash -lc 'echo hi > f.txt'`, `echo hi > f.txt`},
		{`/bin/bash -lc 'echo '"'"'hi'"'"' > f.txt && echo "written"'`, `echo 'hi' > f.txt && echo "written"`},
		{`bash -c "echo \"x\" \$HOME \\ \q"`, `echo "x" $HOME \ \q`},
		{`/bin/zsh -lc ls\ -la`, `ls -la`},
		{`ls -la`, `ls -la`},
		{`python3 -c 'print(1)'`, `python3 -c 'print(1)'`},
		{`/bin/bash -lc 'unterminated`, `/bin/bash -lc 'unterminated`},
		{`/bin/bash -lc 'a' 'b'`, `/bin/bash -lc 'a' 'b'`},
	}
	for _, tt := range tests {
		if got := shellCommand(tt.reported); got != tt.want {
			t.Errorf("shellCommand(%q): expected %q, got %q", tt.reported, tt.want, got)
		}
	}
}

// Codex reports an API error as the body it got; the turn's failure says the body's
// message. (Real Codex 0.169.0 output.)
func TestCodexAPIErrorSaysTheAPIsMessage(t *testing.T) {
	tests := []struct{ reported, want string }{
		{`{"error":{"type":"invalid_request_error","code":null,"param":null,"message":"model not found"}}`, "model not found"},
		{`{"error":{"message":""}}`, `{"error":{"message":""}}`},
		{`stream disconnected before completion`, `stream disconnected before completion`},
		{`{"detail":"Unauthorized"}`, `{"detail":"Unauthorized"}`},
	}
	for _, tt := range tests {
		p := &codexParser{}
		p.line([]byte(`{"type":"thread.started","thread_id":"t-1"}`))
		b, _ := json.Marshal(map[string]any{"type": "turn.failed", "error": map[string]string{"message": tt.reported}})
		p.line(b)
		if got := p.transcript(); !got.failed || got.errorText != tt.want {
			t.Errorf("%s: expected the failure %q, got %+v", tt.reported, tt.want, got)
		}
	}
}
