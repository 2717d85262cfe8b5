package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// Runner is the core.AgentRunner of the local machines. An agent id bound to a command
// runs that command under the command-agent protocol (command.go); otherwise its CLI
// (claude.go, codex.go, cursor.go, grok.go) runs in headless mode.
type Runner struct {
	commands map[string]string
	lookPath func(string) (string, error)
	// grace is the time an interrupted agent's process group has between SIGTERM and
	// SIGKILL.
	grace time.Duration
}

var _ core.AgentRunner = (*Runner)(nil)

// NewRunner returns a runner over commands (agent id -> command, as read by
// CommandsFromEnv; blank commands and unknown ids are ignored) and lookPath, which
// finds a CLI program (nil means exec.LookPath). The map is copied.
func NewRunner(commands map[string]string, lookPath func(string) (string, error)) *Runner {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	return &Runner{commands: boundCommands(commands), lookPath: lookPath, grace: defaultGrace}
}

// RunTurn runs one turn of req.Agent in req.Dir. It never returns an error: every
// failure is a TurnResult with outcome error and a failure code.
func (r *Runner) RunTurn(ctx context.Context, req core.TurnRequest) core.TurnResult {
	// Checked first: exec reports a missing working directory as a missing program.
	if fi, err := os.Stat(req.Dir); err != nil || !fi.IsDir() {
		return failed(core.FailureAgentError, fmt.Sprintf("the workspace checkout %q is not a directory on this machine", req.Dir))
	}
	if command, bound := r.commands[req.Agent]; bound {
		return r.runCommand(ctx, command, req)
	}
	c, ok := clis[req.Agent]
	if !ok {
		return failed(core.FailureAgentError, fmt.Sprintf("unknown agent %q", req.Agent))
	}
	return r.runCLI(ctx, c, req)
}

// failed is an error TurnResult with its message cut to the limit.
func failed(code, message string) core.TurnResult {
	return core.TurnResult{Outcome: core.OutcomeError, FailureCode: code, FailureMessage: lastRunes(strings.TrimSpace(message), core.MaxFailureMessageChars)}
}

// lastRunes returns the last n characters of s.
func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

// startFailure is the result of a process that could not be started: a program that
// is not there (or a shell that is not) is agent_not_installed, anything else (too
// many processes, a program that is not executable) agent_error.
func startFailure(program string, err error) core.TurnResult {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return failed(core.FailureAgentNotInstalled, fmt.Sprintf("%s could not be started: %v", program, err))
	}
	return failed(core.FailureAgentError, fmt.Sprintf("%s could not be started: %v", program, err))
}

// exitFailure is the result of a process that exited unsuccessfully: exit 127 (the
// shell's "command not found", or a script whose interpreter is missing) is
// agent_not_installed, any other failure agent_error. The message is the agent's own
// error text when it has one (reported, e.g. from its JSON output), else the tail of
// its standard error, else a sentence with the exit code or signal.
func exitFailure(program string, st exitStatus, reported string) core.TurnResult {
	message := strings.TrimSpace(reported)
	if message == "" {
		message = strings.TrimSpace(st.stderr)
	}
	if message == "" {
		if st.signal != "" {
			message = fmt.Sprintf("%s was ended by signal %s.", program, st.signal)
		} else {
			message = fmt.Sprintf("%s exited with code %d.", program, st.code)
		}
	}
	code := core.FailureAgentError
	if st.code == 127 {
		code = core.FailureAgentNotInstalled
	}
	return failed(code, message)
}

// turnEnv is the agent's environment: the hub's own, less the hub's secrets, plus the
// turn's WSHUB_* variables (extra, NAME=value, win over inherited ones).
func turnEnv(req core.TurnRequest, extra ...string) []string {
	env := make([]string, 0, len(os.Environ())+8+len(extra))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !hubSecret(name) {
			env = append(env, kv)
		}
	}
	env = append(env,
		"WSHUB_WORKSPACE_ID="+req.WorkspaceID,
		"WSHUB_TURN_ID="+req.TurnID,
		"WSHUB_MODEL="+req.Model,
		"WSHUB_RUNTIME_MODE="+req.RuntimeMode,
		"WSHUB_BRANCH="+req.Branch,
		"WSHUB_ATTACHMENTS="+strings.Join(req.Attachments, "\n"),
		"WSHUB_SESSION_ID="+req.SessionID,
	)
	// exec keeps the last value of a repeated name, so these override the hub's.
	return append(env, extra...)
}

// hubSecret reports whether an environment variable of the hub must not reach
// agents: the database URL and any WSHUB_ variable that holds a key, token or secret
// (the content key today, chat credentials later). An agent runs arbitrary code in a
// checkout; it has no business reading the hub's store or sealed content.
func hubSecret(name string) bool {
	if name == "DATABASE_URL" {
		return true
	}
	if !strings.HasPrefix(name, "WSHUB_") {
		return false
	}
	for _, word := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD"} {
		if strings.Contains(name, word) {
			return true
		}
	}
	return false
}

// runtimeMode returns req's mode, the default when empty, or an error result for a
// mode this package does not know.
func runtimeMode(req core.TurnRequest) (string, *core.TurnResult) {
	mode := req.RuntimeMode
	if mode == "" {
		mode = core.DefaultRuntimeMode
	}
	for _, m := range core.RuntimeModes {
		if m == mode {
			return mode, nil
		}
	}
	res := failed(core.FailureAgentError, fmt.Sprintf("unknown runtime mode %q", req.RuntimeMode))
	return "", &res
}

// promptWithAttachments is the prompt a CLI receives: the message, then the paths of
// its attached files (relative to the checkout, the agent's working directory), so the
// agent knows to read them.
func promptWithAttachments(req core.TurnRequest) string {
	if len(req.Attachments) == 0 {
		return req.Prompt
	}
	var b strings.Builder
	b.WriteString(req.Prompt)
	b.WriteString("\n\nAttached files:\n")
	for _, p := range req.Attachments {
		b.WriteString("- ")
		b.WriteString(p)
		b.WriteString("\n")
	}
	return b.String()
}
