package agents_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/agentcli"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/modelapi"
)

// The real-CLI tests run the CLIs scripts/agents.sh installs (internal/testkit/agentcli)
// through the runner, in the bubblewrap sandbox as turns run, against the stand-in
// model APIs of internal/testkit/modelapi. They set the agents' API keys in the environment,
// so they do not run in parallel.

// modelNetwork is the project network of these turns: the stand-in listens on the
// host's loopback, which the sandbox shares with the host in this network setting.
const modelNetwork = core.NetworkHost

// realRunner is a sandboxed runner for cli, whose model API is api, with self as the
// wshub binary ("" for none).
func realRunner(t *testing.T, cli agentcli.CLI, api *modelapi.Server, self string) *agents.Runner {
	t.Helper()
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	r, err := agents.New(context.Background(), agents.Options{
		StateDir: t.TempDir(), Self: self,
		// Only this CLI is installed (the runner looks every agent's program up at
		// start, to check the ones it would list can run).
		LookPath: func(program string) (string, error) {
			if filepath.Base(cli.Path) != program {
				return "", exec.ErrNotFound
			}
			return cli.Path, nil
		},
		AgentEnv: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"},
		// The stand-in on the host's loopback, as an operator opens a model gateway
		// there to "full" sandboxes.
		Sandbox: sandbox.Config{Mode: sandbox.ModeBwrap, ReadOnly: []string{cli.Dir},
			EgressAllow: []string{strings.TrimPrefix(api.URL, "http://")}},
		ClaudeBaseURL: api.URL,
		CodexBaseURL:  api.URL + "/v1",
	})
	if err != nil {
		t.Fatalf("expected the bubblewrap sandbox to work here (make test installs bubblewrap): %v", err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	return r
}

// events records a turn's events.
type events struct {
	mu  sync.Mutex
	got []core.TurnEvent
}

func (e *events) add(ev core.TurnEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.got = append(e.got, ev)
}

// steps is the events without text deltas, as "type tool summary" lines.
func (e *events) steps() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.got {
		if ev.Type != core.EventText {
			out = append(out, strings.TrimSpace(string(ev.Type)+" "+ev.Tool+" "+ev.Summary))
		}
	}
	return out
}

// text is the text deltas joined.
func (e *events) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.got {
		if ev.Type == core.EventText {
			b.WriteString(ev.Delta)
		}
	}
	return b.String()
}

// realTurn is a turn of agent in mode, in a fresh checkout and home, with its events
// recorded.
func realTurn(t *testing.T, agent, mode, prompt string) (core.TurnRequest, *events) {
	t.Helper()
	ev := &events{}
	return core.TurnRequest{WorkspaceID: "ws_real", TurnID: "turn_1", Agent: agent, Model: "test-model",
		RuntimeMode: mode, Branch: "main", Dir: t.TempDir(), Home: t.TempDir(), Network: modelNetwork,
		Prompt: prompt, Events: ev.add}, ev
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventually.Eventually(t, time.Minute, what, cond)
}

// exists reports whether a file is there.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// processesWith lists the host's processes whose command line contains marker.
func processesWith(t *testing.T, marker string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if line := strings.ReplaceAll(string(b), "\x00", " "); err == nil && strings.Contains(line, marker) {
			out = append(out, f+": "+line)
		}
	}
	return out
}

// stopMidTool runs a turn whose tool runs until the turn is stopped, stops it once
// the tool has started, and checks the turn is interrupted and its processes, the
// tool's included, are gone; then that the next turn resumes the stopped one's
// session, its prompt included.
func stopMidTool(t *testing.T, agent string, cli agentcli.CLI) {
	t.Helper()
	api := modelapi.New(t)
	r := realRunner(t, cli, api, "")
	const marker = "987654321"
	// The model's next answer never comes: a CLI that leaves the command running in
	// the background while it asks (Codex) is mid-turn too.
	api.Script(modelapi.Reply{Command: "touch started && sleep " + marker}, modelapi.Reply{Hold: make(chan struct{})})
	req, _ := realTurn(t, agent, "full-access", "Wait a long time")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan core.TurnResult, 1)
	go func() { done <- r.RunTurn(ctx, req) }()
	waitFor(t, "the tool to start", func() bool { return exists(filepath.Join(req.Dir, "started")) })
	if left := processesWith(t, "sleep "+marker); len(left) == 0 {
		t.Fatalf("expected the tool's sleep running before the stop")
	}
	cancel()
	var res core.TurnResult
	select {
	case res = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("expected the stopped turn to end within a minute")
	}
	if res.Outcome != core.OutcomeInterrupted {
		t.Fatalf("expected the turn interrupted, got %+v", res)
	}
	if left := processesWith(t, "sleep "+marker); len(left) != 0 {
		t.Fatalf("expected the turn's processes ended with it, found %v", left)
	}
	if res.SessionID == "" {
		t.Fatalf("expected the stopped turn to keep its session, got %+v", res)
	}

	api.Drop()
	resumed := resume(t, r, api, req, res.SessionID, "Go on", "resumed")
	if !resumed.ContainsText("Wait a long time") || !resumed.ContainsText("Go on") {
		t.Fatalf("expected the resumed request to hold the stopped turn's prompt, got %.2000s", resumed.Body)
	}
}

// everyMode runs a turn of agent in each runtime mode, the model asking for a command
// that writes a file with python (which no CLI counts as a mere file edit), and
// checks the CLI took the mode's flags (the turn completes, with the command's
// result sent back) and whether the command ran: ran[mode].
func everyMode(t *testing.T, agent string, cli agentcli.CLI, ran map[string]bool) {
	t.Helper()
	api := modelapi.New(t)
	r := realRunner(t, cli, api, "")
	for _, mode := range core.RuntimeModes {
		t.Run(mode, func(t *testing.T) {
			api.Script(modelapi.Reply{Command: `echo ran && python3 -c "open('wrote', 'w')"`}, modelapi.Reply{Text: "mode ok"})
			before := len(api.ToolResults())
			req, _ := realTurn(t, agent, mode, "Run the command")
			res := r.RunTurn(context.Background(), req)
			if res.Outcome != core.OutcomeCompleted || res.Reply != "mode ok" {
				t.Fatalf("expected the turn completed with mode ok, got %+v", res)
			}
			results := api.ToolResults()[before:]
			if len(results) != 1 {
				t.Fatalf("expected one tool result, got %q", results)
			}
			if wrote := exists(filepath.Join(req.Dir, "wrote")); wrote != ran[mode] {
				t.Fatalf("expected the command run: %v, got %v; the tool result: %q", ran[mode], wrote, results[0])
			}
		})
	}
}

// apiError runs a turn of agent whose model API answers with an error, and checks the
// turn fails with the API's message and no event says it as the model's text.
func apiError(t *testing.T, agent string, cli agentcli.CLI, want string) {
	t.Helper()
	api := modelapi.New(t) // nothing scripted: every conversation request fails with a 400
	req, ev := realTurn(t, agent, "full-access", "Hello")
	res := realRunner(t, cli, api, "").RunTurn(context.Background(), req)
	if res.Outcome != core.OutcomeError || res.FailureCode != core.FailureAgentError || res.FailureMessage != want {
		t.Fatalf("expected the turn failed with %q, got %+v", want, res)
	}
	if got := ev.text(); got != "" {
		t.Fatalf("expected no text from the model, got %q", got)
	}
}

// toolThenResume has the model ask agent's CLI to run command (which writes hi to
// f.txt and prints written), then answer "done"; and checks the command ran in the
// checkout, its output went back to the model, the turn's steps name tool and the
// command, and the reply and session came back. Then a second turn resumes that
// session: its request holds the first turn's conversation and names the session in
// sessionHeader.
func toolThenResume(t *testing.T, agent string, cli agentcli.CLI, command, tool, sessionHeader string) {
	t.Helper()
	api := modelapi.New(t)
	r := realRunner(t, cli, api, "")
	api.Script(modelapi.Reply{Command: command}, modelapi.Reply{Text: "done"})
	req, ev := realTurn(t, agent, "full-access", "Write hi to f.txt")
	res := r.RunTurn(context.Background(), req)
	if res.Outcome != core.OutcomeCompleted || res.Reply != "done" || res.SessionID == "" {
		t.Fatalf("expected the turn completed with the reply done and a session, got %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(req.Dir, "f.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("expected the tool to write f.txt in the checkout, got %q, %v", b, err)
	}
	if got := api.ToolResults(); len(got) != 1 || !slices.Contains(strings.Split(got[0], "\n"), "written") {
		t.Fatalf("expected the command's output sent back, got %q", got)
	}
	want := []string{"tool_started " + tool + " " + command, "tool_finished " + tool}
	if got := ev.steps(); !slices.Equal(got, want) {
		t.Fatalf("expected the steps %q, got %q", want, got)
	}
	if got := ev.text(); got != "done" {
		t.Fatalf("expected the text done among the events, got %q", got)
	}

	resumed := resume(t, r, api, req, res.SessionID, "Once more", "again")
	if !resumed.ContainsText("Write hi to f.txt") || !resumed.ContainsText("Once more") || !resumed.ContainsText("written") {
		t.Fatalf("expected the resumed request to hold both prompts and the first tool result, got %.2000s", resumed.Body)
	}
	if got := resumed.Header.Get(sessionHeader); got != res.SessionID {
		t.Fatalf("expected the resumed request in session %s, got %q", res.SessionID, got)
	}
}

// resume runs the next turn of req's workspace in session, the model answering reply,
// and checks it completed in that session; it returns the request the CLI made for it.
func resume(t *testing.T, r *agents.Runner, api *modelapi.Server, req core.TurnRequest, session, prompt, reply string) modelapi.Request {
	t.Helper()
	api.Script(modelapi.Reply{Text: reply})
	first := len(api.Main())
	next, _ := realTurn(t, req.Agent, "full-access", prompt)
	next.Dir, next.Home, next.SessionID = req.Dir, req.Home, session
	res := r.RunTurn(context.Background(), next)
	if res.Outcome != core.OutcomeCompleted || res.Reply != reply || res.SessionID != session {
		t.Fatalf("expected the next turn completed in session %s, got %+v", session, res)
	}
	main := api.Main()
	if len(main) != first+1 {
		t.Fatalf("expected one more conversation request, got %d after %d", len(main), first)
	}
	return main[first]
}
