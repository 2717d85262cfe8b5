package agents

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
)

// CommandsFromEnv reads WSHUB_AGENT_1_COMMAND..WSHUB_AGENT_4_COMMAND from environ
// (os.Environ form) into agent id -> command, leaving out blank values. It takes the
// environment as an argument so tests and callers need not touch the process's own.
// When a name repeats, the first value wins, as with os.Getenv.
func CommandsFromEnv(environ []string) map[string]string {
	commands := make(map[string]string)
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		n, ok := agentNumber(name)
		if !ok || strings.TrimSpace(value) == "" {
			continue
		}
		id := "agent_" + strconv.Itoa(n)
		if _, seen := commands[id]; !seen {
			commands[id] = value
		}
	}
	return commands
}

// agentNumber parses N out of WSHUB_AGENT_<N>_COMMAND for N in 1..4.
func agentNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "WSHUB_AGENT_")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, "_COMMAND")
	if !ok || len(digits) != 1 {
		return 0, false
	}
	n := int(digits[0] - '0')
	return n, n >= 1 && n <= 4
}

// turnEnv is an agent's whole environment, built from an allow-list rather than by
// filtering the hub's: PATH (in the sandbox, only its directories the sandbox shows),
// HOME (the workspace's home as the agent sees it), LANG, TERM, the variables the
// operator named for agents (their credentials), and the turn's WSHUB_* variables. Whatever else the hub was started with (DATABASE_URL,
// PGPASSWORD, WSHUB_CONTENT_KEY, chat tokens, cloud credentials) never reaches an
// agent, whatever it is called.
func (r *Runner) turnEnv(req core.TurnRequest, home string, extra ...string) []string {
	env := []string{
		"PATH=" + r.box.ShownPath(cmp.Or(r.getenv("PATH"), sandbox.DefaultPath)),
		"HOME=" + home,
		"LANG=" + cmp.Or(r.getenv("LANG"), "C.UTF-8"),
		"TERM=" + cmp.Or(r.getenv("TERM"), "dumb"),
	}
	// The workspace environment's variables and secrets first: what the operator gave
	// agents, and the turn's own, win over a repository's.
	env = append(env, req.Env...)
	for _, name := range r.agentEnv {
		if v, ok := r.lookup(name); ok {
			env = append(env, name+"="+v)
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
	// exec keeps the last value of a repeated name, so extra wins.
	return append(env, extra...)
}

// lookup reads the hub's environment (Options.LookupEnv).
func (r *Runner) lookup(name string) (string, bool) {
	if r.lookupEnv == nil {
		return os.LookupEnv(name)
	}
	return r.lookupEnv(name)
}

func (r *Runner) getenv(name string) string {
	v, _ := r.lookup(name)
	return v
}

// checkBaseURL accepts an http or https URL with a host: a model API's base.
func checkBaseURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	if p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
		return fmt.Errorf("%q is not an http or https URL", u)
	}
	return nil
}

// agentEnvNames checks WSHUB_AGENT_ENV: names of variables, none of them the hub's
// own configuration or PostgreSQL's (naming DATABASE_URL there would hand agents the
// store), none of the names turnEnv sets itself.
func agentEnvNames(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		for i, c := range n {
			if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
				return nil, fmt.Errorf("WSHUB_AGENT_ENV: %q is not a variable name", n)
			}
		}
		switch {
		case n == "DATABASE_URL", strings.HasPrefix(n, "WSHUB_"), strings.HasPrefix(n, "PG"):
			return nil, fmt.Errorf("WSHUB_AGENT_ENV: %s is the hub's own configuration and is never passed to agents", n)
		case n == "PATH", n == "HOME", n == "LANG", n == "TERM":
			return nil, fmt.Errorf("WSHUB_AGENT_ENV: %s is set by the hub for every agent", n)
		}
		out = append(out, n)
	}
	return out, nil
}
