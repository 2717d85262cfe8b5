package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// fakeCLI is a stand-in for a real agent program: a shell script, found by its own
// lookPath only, that records its arguments and standard input and then does what
// the test says (typically: print a sample of the real CLI's output).
type fakeCLI struct {
	t      *testing.T
	bin    string // directory of the script
	record string // directory of argv and stdin
}

// newFakeCLI installs program as a script that records argv (NUL-terminated
// arguments) and stdin, then runs body.
func newFakeCLI(t *testing.T, program, body string) *fakeCLI {
	t.Helper()
	f := &fakeCLI{t: t, bin: t.TempDir(), record: t.TempDir()}
	script := "#!/bin/sh\n" +
		"printf '%s\\0' \"$@\" > " + shQuote(filepath.Join(f.record, "argv")) + "\n" +
		"cat > " + shQuote(filepath.Join(f.record, "stdin")) + "\n" +
		body + "\n"
	if err := os.WriteFile(filepath.Join(f.bin, program), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// printing is a script body that prints a testdata file and exits with code.
func printing(sample string, code int) string {
	abs, err := filepath.Abs(filepath.Join("testdata", sample))
	if err != nil {
		panic(err)
	}
	return "cat " + shQuote(abs) + "\nexit " + strconv.Itoa(code)
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (f *fakeCLI) lookPath(name string) (string, error) {
	p := filepath.Join(f.bin, name)
	if _, err := os.Stat(p); err != nil {
		return "", exec.ErrNotFound
	}
	return p, nil
}

// argv is what the fake was run with.
func (f *fakeCLI) argv() []string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.record, "argv"))
	if err != nil {
		f.t.Fatalf("the fake CLI did not record its arguments: %v", err)
	}
	args := strings.Split(string(b), "\x00")
	return args[:len(args)-1] // the last argument is NUL-terminated too
}

// stdin is what the fake read on standard input.
func (f *fakeCLI) stdin() string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.record, "stdin"))
	if err != nil {
		f.t.Fatalf("the fake CLI did not record its input: %v", err)
	}
	return string(b)
}

// turn is a request for a turn in a fresh checkout.
func turn(t *testing.T, agent, mode, session string) core.TurnRequest {
	return core.TurnRequest{
		WorkspaceID: "ws_01JQ7Z", TurnID: "tn_01", Agent: agent, Model: "test-model", RuntimeMode: mode,
		Branch: "wshub/fix-add", Dir: t.TempDir(), Home: t.TempDir(), Network: core.NetworkFull, Prompt: "Fix the failing test",
		Attachments: []string{".wshub/attachments/as_01-log.txt"}, SessionID: session,
	}
}

// unsandboxed is a runner whose agents run without the sandbox: these tests drive
// fake programs kept in temporary directories the sandbox would hide (sandbox_test.go
// runs agents in it).
func unsandboxed(t *testing.T, commands map[string]string, lookPath func(string) (string, error)) *Runner {
	t.Helper()
	r, err := New(context.Background(), Options{Commands: commands, LookPath: lookPath, StateDir: t.TempDir(),
		Sandbox: sandbox.Config{Mode: sandbox.ModeNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close) // what it prepares for workspaces' next turns
	return r
}

// checkArgv compares argument lists, saying which differ.
func checkArgv(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\nexpected %q\n     got %q", what, want, got)
	}
}

// checkResult compares a TurnResult field by field.
func checkResult(t *testing.T, got, want core.TurnResult) {
	t.Helper()
	if got != want {
		t.Errorf("TurnResult:\nexpected %+v\n     got %+v", want, got)
	}
}

// runFake runs req against a fake CLI with the given body.
func runFake(t *testing.T, program, body string, req core.TurnRequest) (core.TurnResult, *fakeCLI) {
	t.Helper()
	f := newFakeCLI(t, program, body)
	return unsandboxed(t, nil, f.lookPath).RunTurn(context.Background(), req), f
}

// withAttachments is the prompt the CLIs get for turn's request.
const withAttachments = "Fix the failing test\n\nAttached files:\n- .wshub/attachments/as_01-log.txt\n"
