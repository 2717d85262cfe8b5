package agents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// Runner is the core.AgentRunner of the local machines. An agent id bound to a command
// runs that command under the command-agent protocol (command.go); otherwise its CLI
// (claude.go, codex.go, cursor.go, grok.go) runs in headless mode. Every agent process
// runs in a sandbox of the host's (adapters/sandbox) with an allow-listed environment
// (env.go).
type Runner struct {
	commands map[string]string
	lookPath func(string) (string, error)
	// grace is the time an interrupted agent's process group has between SIGTERM and
	// SIGKILL.
	grace time.Duration
	// box runs the agents' processes confined: bubblewrap, network, cgroup.
	box *sandbox.Host
	// agentEnv names the hub's environment variables agents get (credentials).
	agentEnv []string
	// lookupEnv reads the hub's environment (Options.LookupEnv); nil: the process's.
	lookupEnv func(string) (string, bool)
	// stateDir is hub-private: the turns' session files and approval sockets.
	stateDir string
	// self is the wshub executable (the permission prompt tool's MCP server); "" when
	// unknown, and then Claude Code cannot ask for approvals.
	self string
	// endpoints are the model APIs the CLIs call instead of their vendors', by agent id.
	endpoints map[string]string
}

var _ core.AgentRunner = (*Runner)(nil)

// Options configure a Runner.
type Options struct {
	// Commands binds agent ids to commands (as read by CommandsFromEnv; blank commands
	// and unknown ids are ignored). The map is copied.
	Commands map[string]string
	// LookPath finds a CLI program; nil means exec.LookPath.
	LookPath func(string) (string, error)
	// Sandbox confines agent processes; the zero value is bubblewrap.
	Sandbox sandbox.Config
	// AgentEnv names environment variables of the hub passed on to agents
	// (WSHUB_AGENT_ENV, e.g. ANTHROPIC_API_KEY). Nothing else of the hub's environment is.
	AgentEnv []string
	// LookupEnv reads the hub's environment, whose PATH, LANG, TERM and AgentEnv
	// variables agents get; nil means os.LookupEnv. A hub configured from an
	// environment of its own (a test's) passes that one on.
	LookupEnv func(string) (string, bool)
	// StateDir is a directory of the hub's that agents never see.
	StateDir string
	// Self is the wshub executable, which serves Claude Code's permission prompt tool
	// (`wshub approval-mcp`) in the approval-required mode. Empty: Claude Code there
	// denies what would need approval (--permission-mode dontAsk), as nobody can be asked.
	Self string
	// ClaudeBaseURL is the Anthropic Messages API Claude Code calls instead of
	// Anthropic's (WSHUB_CLAUDE_BASE_URL): an LLM gateway. Empty: Claude Code's own.
	ClaudeBaseURL string
	// CodexBaseURL is the OpenAI Responses API Codex calls instead of OpenAI's
	// (WSHUB_CODEX_BASE_URL), with the key in OPENAI_API_KEY. Empty: Codex's own.
	CodexBaseURL string
	// Limits hold each turn to its workspace's size; the zero value is a cgroup per
	// turn.
	Limits sandbox.LimitsConfig
	// Log gets what the runner did to the host at start (a systemd scope made for the
	// turns' cgroups); nil: nothing is logged.
	Log *slog.Logger
}

// New returns a runner. With the bubblewrap sandbox it checks that bubblewrap works
// here, and fails saying how to install it when it does not: the hub must not run
// agents unconfined because a package is missing. Likewise, unless limits are off, it
// checks that a turn's cgroup can be made, and fails saying why when it cannot; and
// that every agent it would list can run (command_check.go).
func New(ctx context.Context, opt Options) (*Runner, error) {
	if runtime.GOOS != "linux" {
		return nil, sandbox.ErrNeedsLinux
	}
	if opt.LookPath == nil {
		opt.LookPath = exec.LookPath
	}
	if opt.StateDir == "" {
		return nil, errors.New("agent runner: no state directory")
	}
	// Absolute: bwrap resolves bind sources (the session file) against the checkout.
	stateDir, err := filepath.Abs(opt.StateDir)
	if err != nil {
		return nil, fmt.Errorf("agent runner state: %w", err)
	}
	opt.StateDir = stateDir
	if err := os.MkdirAll(opt.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("agent runner state: %w", err)
	}
	agentEnv, err := agentEnvNames(opt.AgentEnv)
	if err != nil {
		return nil, err
	}
	r := &Runner{commands: boundCommands(opt.Commands), lookPath: opt.LookPath, grace: sandbox.DefaultGrace,
		agentEnv: agentEnv, lookupEnv: opt.LookupEnv, stateDir: opt.StateDir, endpoints: map[string]string{}}
	for id, u := range map[string]string{"agent_1": opt.ClaudeBaseURL, "agent_2": opt.CodexBaseURL} {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		if err := checkBaseURL(u); err != nil {
			return nil, fmt.Errorf("%s base URL: %w", clis[id].name, err)
		}
		r.endpoints[id] = u
	}
	if opt.Self != "" {
		if r.self, err = filepath.Abs(opt.Self); err != nil {
			return nil, fmt.Errorf("agent runner: %w", err)
		}
	}
	if r.box, err = sandbox.New(ctx, sandbox.Options{Sandbox: opt.Sandbox, Limits: opt.Limits, StateDir: opt.StateDir, Log: opt.Log}); err != nil {
		return nil, err
	}
	if err := r.checkAgents(); err != nil {
		return nil, err
	}
	return r, nil
}

// Close ends what the runner keeps for workspaces' next turns (their network
// namespaces, with pasta); turns after it make their own.
func (r *Runner) Close() { r.box.Close() }

// Limits says how turns are held to their workspace's size, for the start-up log and
// /readyz: the cgroup hierarchy ("cgroup v1 (memory, pids, cpu)"), or sandbox.LimitsOff.
func (r *Runner) Limits() string { return r.box.Limits() }

// LimitsMissing says, in a sentence for the start-up log, why turns run without the
// limits asked for (LimitsConfig.Optional): "" when they have them, or were turned off.
func (r *Runner) LimitsMissing() string { return r.box.LimitsMissing() }

// Confine makes a cgroup for one piece of the hub's work on a workspace's data (what
// names it in errors), as a turn's: see sandbox.Host.Confine.
func (r *Runner) Confine(what string) (wrap func(path string, args []string) (string, []string), release func() error, err error) {
	return r.box.Confine(what)
}

// RunTurn runs one turn of req.Agent in req.Dir. It never returns an error: every
// failure is a TurnResult with outcome error and a failure code.
func (r *Runner) RunTurn(ctx context.Context, req core.TurnRequest) core.TurnResult {
	// Checked first: exec reports a missing working directory as a missing program.
	if fi, err := os.Stat(req.Dir); err != nil || !fi.IsDir() {
		return failed(core.FailureAgentError, fmt.Sprintf("the workspace checkout %q is not a directory on this machine", req.Dir))
	}
	if req.Home == "" {
		return failed(core.FailureAgentError, "the workspace has no home directory on this machine")
	}
	if err := os.MkdirAll(req.Home, 0o700); err != nil {
		return failed(core.FailureAgentError, fmt.Sprintf("the workspace's home directory could not be made: %v", err))
	}
	// Whatever an earlier turn of this workspace left running (a hub that crashed
	// mid-turn) is ended before this one starts in the same checkout.
	if err := r.box.EndStrays(req.WorkspaceID); err != nil {
		return failed(core.FailureAgentError, "processes of an earlier turn could not be stopped: "+err.Error())
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

// limitFailure is the result of a turn that ran into a limit of its cgroup: what the
// agent said last, then which limit (kept whole when the message is cut).
func limitFailure(st sandbox.Exit) core.TurnResult {
	return failed(core.FailureAgentError, strings.TrimSpace(st.Stderr)+"\n\n"+st.Limit)
}

// exitFailure is the result of a process that exited unsuccessfully: exit 127 (the
// shell's "command not found", or a script whose interpreter is missing) is
// agent_not_installed, any other failure agent_error. The message is the agent's own
// error text when it has one (reported, e.g. from its JSON output), else the tail of
// its standard error, else a sentence with the exit code or signal.
func exitFailure(program string, st sandbox.Exit, reported string) core.TurnResult {
	message := strings.TrimSpace(reported)
	if message == "" {
		message = strings.TrimSpace(st.Stderr)
	}
	if message == "" {
		if st.Signal != "" {
			message = fmt.Sprintf("%s was ended by signal %s.", program, st.Signal)
		} else {
			message = fmt.Sprintf("%s exited with code %d.", program, st.Code)
		}
	}
	code := core.FailureAgentError
	if st.Code == 127 {
		code = core.FailureAgentNotInstalled
	}
	return failed(code, message)
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
