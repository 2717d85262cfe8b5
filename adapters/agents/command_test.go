package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// runCommandAgent runs command as agent_1's command for req.
func runCommandAgent(ctx context.Context, t *testing.T, command string, req core.TurnRequest) core.TurnResult {
	t.Helper()
	noCLIs := func(string) (string, error) { return "", errors.New("no CLIs in this test") }
	return unsandboxed(t, map[string]string{"agent_1": command}, noCLIs).RunTurn(ctx, req)
}

func TestCommandCompleted(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    string
	}{
		{"reply is stdout, prompt on stdin", `printf 'got: '; cat`, "got: Fix the failing test"},
		{"one trailing newline trimmed", `cat >/dev/null; printf 'a\n\n'`, "a\n"},
		{"runs in the checkout", `cat >/dev/null; ls`, "file-in-checkout"},
		{"empty reply", `cat >/dev/null`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := turn(t, "agent_1", "full-access", "")
			if err := os.WriteFile(filepath.Join(req.Dir, "file-in-checkout"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			res := runCommandAgent(context.Background(), t, tt.command, req)
			checkResult(t, res, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: tt.want})
		})
	}
}

// A program gone since the hub started (its start-up check passed) ends the turn
// agent_not_installed, as does a command that exits 127.
func TestCommandNotFound(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(gone, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{gone + " --flag", "exit 127"} {
		t.Run(command, func(t *testing.T) {
			noCLIs := func(string) (string, error) { return "", errors.New("no CLIs in this test") }
			r := unsandboxed(t, map[string]string{"agent_1": command}, noCLIs)
			if err := os.Remove(gone); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			res := r.RunTurn(context.Background(), turn(t, "agent_1", "auto", ""))
			if res.Outcome != core.OutcomeError || res.FailureCode != core.FailureAgentNotInstalled {
				t.Errorf("expected error/agent_not_installed, got %+v", res)
			}
		})
	}
}

func TestCommandErrorKeepsLastStderr(t *testing.T) {
	// 700 numbered items of 5 characters (one of them "é", two bytes): 3,500
	// characters, of which the last 1,200 are the message.
	command := `cat >/dev/null; i=0; while [ $i -lt 700 ]; do printf '%03dé,' $i >&2; i=$((i+1)); done; echo >&2; exit 3`
	var all strings.Builder
	for i := range 700 {
		fmt.Fprintf(&all, "%03dé,", i)
	}
	runes := []rune(all.String())
	want := string(runes[len(runes)-core.MaxFailureMessageChars:])

	res := runCommandAgent(context.Background(), t, command, turn(t, "agent_1", "auto", ""))
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: want})
	if n := len([]rune(res.FailureMessage)); n != core.MaxFailureMessageChars {
		t.Errorf("message length: expected %d characters, got %d", core.MaxFailureMessageChars, n)
	}
}

func TestCommandErrorWithoutStderr(t *testing.T) {
	res := runCommandAgent(context.Background(), t, "cat >/dev/null; echo partial; exit 3", turn(t, "agent_1", "auto", "s-0"))
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError,
		FailureMessage: "The agent command exited with code 3.", SessionID: "s-0"})
}

// processGone reports whether pid has exited (a zombie waiting for its reaper counts).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X")
}

// waitForFile waits until path exists: the agent under test got that far.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	eventually.Eventually(t, 10*time.Second, "the agent to create "+path, func() bool { return exists(path) })
}

// cancelWhenReady cancels ctx once the agent under test has created ready.
func cancelWhenReady(t *testing.T, ready string) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		eventually.Within(10*time.Second, func() bool { return exists(ready) })
		cancel()
	}()
	return ctx
}

func TestCommandInterruptKillsProcessGroup(t *testing.T) {
	req := turn(t, "agent_1", "full-access", "")
	dir := t.TempDir()
	pidFile, ready := filepath.Join(dir, "grandchild.pid"), filepath.Join(dir, "ready")
	// The agent starts a grandchild that would outlive it, reports progress and waits.
	command := `cat >/dev/null; sleep 60 & echo $! > ` + shQuote(pidFile) + `; echo working; touch ` + shQuote(ready) + `; wait`

	ctx := cancelWhenReady(t, ready)
	done := make(chan core.TurnResult, 1)
	go func() { done <- runCommandAgent(ctx, t, command, req) }()
	waitForFile(t, ready)
	start := time.Now()

	var res core.TurnResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunTurn did not return within 10s of the cancel")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("interrupt took %v, expected a few seconds at most", d)
	}
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: "working"})
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	eventually.Eventually(t, 3*time.Second, fmt.Sprintf("grandchild %d (sleep 60) gone after the interrupt", pid),
		func() bool { return processGone(pid) })
}

func TestCommandInterruptEscalatesToSIGKILL(t *testing.T) {
	// An agent that ignores SIGTERM is killed after the grace period.
	ready := filepath.Join(t.TempDir(), "ready")
	r := unsandboxed(t, map[string]string{"agent_1": `trap '' TERM; cat >/dev/null; echo stubborn; touch ` + shQuote(ready) + `; while :; do sleep 1; done`}, nil)
	r.grace = 200 * time.Millisecond
	ctx := cancelWhenReady(t, ready)
	res := r.RunTurn(ctx, turn(t, "agent_1", "auto", ""))
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeInterrupted, Reply: "stubborn"})
}

func TestCommandDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := runCommandAgent(ctx, t, "cat >/dev/null; sleep 30", turn(t, "agent_1", "auto", "s-1"))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("deadline interrupt took %v, expected a few seconds at most", d)
	}
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeInterrupted, SessionID: "s-1"})
}

func TestCommandAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := runCommandAgent(ctx, t, "echo never", turn(t, "agent_1", "auto", ""))
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeInterrupted})
}

func TestCommandEnvironment(t *testing.T) {
	// The hub's environment holds its secrets under many names; the agent's is built
	// from an allow-list, so none of them (whatever they are called) gets through.
	t.Setenv("DATABASE_URL", "postgres://hub:secret@db/wshub")
	t.Setenv("WSHUB_CONTENT_KEY", "c2VjcmV0")
	t.Setenv("PGPASSWORD", "secret")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("WSHUB_TURN_ID", "stale-value-from-the-hub")
	t.Setenv("AGENT_API_KEY", "for-the-agent")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TERM", "xterm")
	req := turn(t, "agent_1", "auto-accept-edits", "sess-prev")
	req.Attachments = []string{"a/one.txt", "b/two words.png"}
	r, err := New(context.Background(), Options{Commands: map[string]string{"agent_1": `cat >/dev/null; test -f "$WSHUB_SESSION_FILE" && echo session-file-exists; env -u PWD -u WSHUB_SESSION_FILE | sort`},
		StateDir: t.TempDir(), AgentEnv: []string{"AGENT_API_KEY", "NOT_SET_ANYWHERE"}, Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	res := r.RunTurn(context.Background(), req)
	want := strings.Join([]string{
		"session-file-exists",
		"AGENT_API_KEY=for-the-agent",
		"HOME=" + req.Home,
		"LANG=C.UTF-8",
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm",
		"WSHUB_ATTACHMENTS=a/one.txt",
		"WSHUB_BRANCH=wshub/fix-add",
		"WSHUB_DECISIONS_FD=4",
		"WSHUB_EVENTS_FD=3",
		"WSHUB_MODEL=test-model",
		"WSHUB_RUNTIME_MODE=auto-accept-edits",
		"WSHUB_SESSION_ID=sess-prev",
		"WSHUB_TURN_ID=tn_01",
		"WSHUB_WORKSPACE_ID=ws_01JQ7Z",
		"b/two words.png", // the second line of WSHUB_ATTACHMENTS, sorted last
	}, "\n")
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: want, SessionID: "sess-prev"})
}

func TestAgentEnvRefusesHubConfiguration(t *testing.T) {
	for _, name := range []string{"DATABASE_URL", "WSHUB_CONTENT_KEY", "PGPASSWORD", "HOME", "1BAD", "A-B"} {
		if _, err := New(context.Background(), Options{StateDir: t.TempDir(), AgentEnv: []string{name}, Sandbox: sandbox.Config{Mode: sandbox.ModeNone}}); err == nil {
			t.Errorf("expected WSHUB_AGENT_ENV=%s to be refused, it was accepted", name)
		}
	}
}

func TestCommandSessionRoundTrip(t *testing.T) {
	// The agent reports a session named after the turn and replies with the session it
	// was given.
	command := `cat >/dev/null; printf 'sess-%s\n' "$WSHUB_TURN_ID" > "$WSHUB_SESSION_FILE"; printf '%s' "$WSHUB_SESSION_ID"`
	req := turn(t, "agent_1", "auto", "")
	req.TurnID = "t1"
	first := runCommandAgent(context.Background(), t, command, req)
	checkResult(t, first, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "", SessionID: "sess-t1"})

	req.TurnID, req.SessionID = "t2", first.SessionID
	second := runCommandAgent(context.Background(), t, command, req)
	checkResult(t, second, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "sess-t1", SessionID: "sess-t2"})

	// An agent that reports nothing keeps the session it was given.
	req.SessionID = second.SessionID
	third := runCommandAgent(context.Background(), t, "cat >/dev/null; echo ok", req)
	checkResult(t, third, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "ok", SessionID: "sess-t2"})
}

func TestCommandOutputIsBounded(t *testing.T) {
	// 8 MiB on stdout and stderr: the reply keeps the first MiB, and the turn ends.
	command := `cat >/dev/null; head -c 8388608 /dev/zero | tr '\0' 'x'; head -c 8388608 /dev/zero | tr '\0' 'y' >&2`
	res := runCommandAgent(context.Background(), t, command, turn(t, "agent_1", "auto", ""))
	if res.Outcome != core.OutcomeCompleted || len(res.Reply) != maxStdout || strings.Trim(res.Reply, "x") != "" {
		t.Errorf("expected completed with %d x's, got outcome %q and %d bytes", maxStdout, res.Outcome, len(res.Reply))
	}
}

func TestCommandIgnoringLargePrompt(t *testing.T) {
	// The agent never reads its (larger than a pipe buffer) prompt: the turn still ends.
	req := turn(t, "agent_1", "auto", "")
	req.Prompt = strings.Repeat("p", 1<<20)
	res := runCommandAgent(context.Background(), t, "echo done", req)
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "done"})
}

func TestCommandLeavesNothingRunning(t *testing.T) {
	// A background process that keeps stdout open does not hold the turn: it ends
	// with its agent.
	req := turn(t, "agent_1", "auto", "")
	pidFile := filepath.Join(t.TempDir(), "bg.pid")
	start := time.Now()
	res := runCommandAgent(context.Background(), t, `cat >/dev/null; sleep 60 & echo $! > `+shQuote(pidFile)+`; echo started`, req)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("turn took %v: a leftover background process held it", d)
	}
	checkResult(t, res, core.TurnResult{Outcome: core.OutcomeCompleted, Reply: "started"})
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	eventually.Eventually(t, 3*time.Second, fmt.Sprintf("background process %d gone after the turn", pid),
		func() bool { return processGone(pid) })
}

func TestRunTurnRejects(t *testing.T) {
	t.Run("missing checkout", func(t *testing.T) {
		req := turn(t, "agent_1", "auto", "")
		req.Dir = filepath.Join(req.Dir, "gone")
		res := runCommandAgent(context.Background(), t, "echo hi", req)
		if res.Outcome != core.OutcomeError || res.FailureCode != core.FailureAgentError || !strings.Contains(res.FailureMessage, "gone") {
			t.Errorf("expected error/agent_error naming the checkout, got %+v", res)
		}
	})
	t.Run("unknown runtime mode", func(t *testing.T) {
		res, _ := runFake(t, "claude", "exit 0", turn(t, "agent_1", "yolo", ""))
		checkResult(t, res, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: `unknown runtime mode "yolo"`})
	})
	t.Run("unknown agent", func(t *testing.T) {
		res := unsandboxed(t, nil, nil).RunTurn(context.Background(), turn(t, "agent_9", "auto", ""))
		checkResult(t, res, core.TurnResult{Outcome: core.OutcomeError, FailureCode: core.FailureAgentError, FailureMessage: `unknown agent "agent_9"`})
	})
	t.Run("blank command falls back to the CLI", func(t *testing.T) {
		f := newFakeCLI(t, "codex", printing("codex-exec.jsonl", 0))
		res := unsandboxed(t, map[string]string{"agent_2": "  "}, f.lookPath).RunTurn(context.Background(), turn(t, "agent_2", "auto", ""))
		if res.Outcome != core.OutcomeCompleted || res.SessionID != codexThread {
			t.Errorf("expected the Codex CLI's completed turn, got %+v", res)
		}
	})
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := &lineWriter{max: 8, fn: func(b []byte) { got = append(got, string(b)) }}
	for _, chunk := range []string{"ab", "c\nde", "f\n0123456789abc", "def\nlast\n", "tail"} {
		_, _ = w.Write([]byte(chunk))
	}
	w.close()
	want := []string{"abc", "def", "last", "tail"} // the 16-byte line is dropped
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines: expected %q, got %q", want, got)
	}
}

// The event protocol: JSON lines on fd 3 become turn events, in order; other lines,
// and lines too long, are skipped; the reply is still standard output.
func TestCommandAgentEvents(t *testing.T) {
	// The long line is made by the script: it is larger than one argument may be.
	script := `cat >/dev/null
printf '{"type":"tool_started","tool":"bash","summary":"ls"}\n' >&3
printf 'garbage\n' >&3
awk 'BEGIN { printf "{\"type\":\"text\",\"delta\":\""; for (i = 0; i < ` + strconv.Itoa(maxEventLine+10) + `; i++) printf "x"; printf "\"}\n" }' >&3
printf '{"type":"tool_finished","tool":"bash"}\n{"type":"text","delta":"done"}' >&3
echo reply`
	r, err := New(context.Background(), Options{Commands: map[string]string{"agent_1": script},
		StateDir: t.TempDir(), Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	var mu sync.Mutex
	var got []string
	req := core.TurnRequest{WorkspaceID: "ws_events", TurnID: "turn_1", Agent: "agent_1", Dir: t.TempDir(), Home: t.TempDir(),
		Events: func(e core.TurnEvent) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(e.Type)+":"+e.Tool+e.Summary+e.Delta)
		}}
	res := r.RunTurn(context.Background(), req)
	if res.Outcome != core.OutcomeCompleted || res.Reply != "reply" {
		t.Fatalf("expected the reply from standard output, got %+v", res)
	}
	// The last line has no newline: it is taken when the pipe closes.
	if want := "tool_started:bashls|tool_finished:bash|text:done"; strings.Join(got, "|") != want {
		t.Fatalf("expected events %q, got %q", want, strings.Join(got, "|"))
	}
}
