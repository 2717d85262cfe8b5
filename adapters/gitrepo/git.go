package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Error is a git command that did not succeed. Its text, "git <op>: <reason>", is
// kept as a project's failure reason, so Reason is git's own last line of complaint
// with the hub's directories and any URL credentials taken out.
type Error struct {
	Op     string
	Reason string
	// ExitCode is git's exit status, or -1 when git did not run to completion.
	ExitCode int
	// Err is the underlying failure (an *exec.ExitError, a context error, ...).
	Err error
	// Stderr is git's whole complaint, redacted like Reason (push reads the remote's
	// lines from it).
	Stderr string
}

func (e *Error) Error() string { return "git " + e.Op + ": " + e.Reason }

func (e *Error) Unwrap() error { return e.Err }

// waitDelay bounds how long a killed git may keep its output pipes open through a
// child (ssh, a remote helper) before Wait gives up on them.
const waitDelay = 5 * time.Second

// maxReason caps the failure reason: it is a sentence for a status page, not a log.
const maxReason = 300

// runner runs git for one Mirror or Checkout call.
type runner struct {
	prog   string
	redact redactor
	creds  *Credentials
	// wrap, when set, is the command line git runs by instead (a Confiner's, which
	// joins the work's cgroup first).
	wrap func(path string, args []string) (string, []string)
}

// Confiner holds one piece of the hub's work on a workspace's data in bounds of its
// own (agents.Runner: a cgroup). wrap turns a command line into one that runs inside
// them (nil: as it is); release ends whatever still runs there.
type Confiner interface {
	Confine(what string) (wrap func(path string, args []string) (string, []string), release func() error, err error)
}

// run runs git with args (in dir when dir is not empty) and returns its standard output.
func (g *runner) run(ctx context.Context, dir string, args ...string) (string, error) {
	return g.runInput(ctx, dir, "", args...)
}

// runInput is run with input on git's standard input.
func (g *runner) runInput(ctx context.Context, dir, input string, args ...string) (string, error) {
	var stdin io.Reader
	if input != "" {
		stdin = strings.NewReader(input)
	}
	return g.runWith(ctx, dir, stdin, nil, args...)
}

// runWith is run with stdin (nil: none) on git's standard input and env added to its
// environment (a quarantine's object directories).
func (g *runner) runWith(ctx context.Context, dir string, stdin io.Reader, env []string, args ...string) (string, error) {
	var stdout bytes.Buffer
	if err := g.runTo(ctx, dir, stdin, &stdout, env, args...); err != nil {
		return "", err
	}
	return stdout.String(), nil
}

// runTo is runWith writing git's standard output to stdout: a writer that refuses
// more than it takes (cappedWriter) stops a git whose output has no bound.
func (g *runner) runTo(ctx context.Context, dir string, stdin io.Reader, stdout io.Writer, env []string, args ...string) error {
	op := args[0]
	if op == "remote" && len(args) > 1 {
		op += " " + args[1]
	}
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	args = append(append(append([]string(nil), safeConfig...), g.creds.args()...), args...)
	keyFile, removeKey, err := g.creds.keyFile()
	if err != nil {
		return &Error{Op: op, ExitCode: -1, Reason: "the project's SSH key could not be written for git", Err: err}
	}
	defer removeKey()
	prog := g.prog
	if g.wrap != nil {
		prog, args = g.wrap(prog, args)
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(append(gitEnv(os.Environ(), g.creds.own()), g.creds.env(keyFile)...), env...)
	cmd.WaitDelay = waitDelay
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err = cmd.Run(); err == nil {
		return nil
	}
	e := &Error{Op: op, ExitCode: -1, Err: err}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		e.Reason, e.Err = ctx.Err().Error(), ctx.Err()
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		e.Reason = "the git program was not found"
	case errors.As(err, &exit):
		e.ExitCode = exit.ExitCode()
		e.Reason = lastLine(stderr.String())
		if e.Reason == "" {
			e.Reason = err.Error()
		}
		e.Reason = g.redact.apply(e.Reason)
		e.Stderr = g.redact.applyLong(stderr.String())
	default:
		e.Reason = reasonOf(err, g.redact)
	}
	return e
}

// safeConfig comes first on every git command line the hub runs. Command-line
// configuration wins over every file, so a repository's own config cannot run a
// program in the hub's name: no fsmonitor daemon, no hooks (post-commit runs even
// with --no-verify), and no ext:: transport (a URL that is a shell command).
var safeConfig = []string{
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=/dev/null",
	"-c", "protocol.ext.allow=never",
}

// gitVars are the variables of the hub's environment git may see: what it needs to
// find programs and reach repositories (ssh agent, ssh command, proxies, CA
// certificates). The environment is built from this list, not by filtering the hub's:
// DATABASE_URL, WSHUB_CONTENT_KEY and the rest never reach git, its helpers or a
// hook, and GIT_DIR and its kind cannot point git at another repository.
//
// Private repositories are reached with what the operator gives the hub
// (Credentials), or the hub user's ssh agent (SSH_AUTH_SOCK), ssh command (GIT_SSH,
// GIT_SSH_COMMAND) and ~/.ssh: ssh finds that directory from the user database, not
// from HOME. These serve pushes from a checkout too: the hub's git runs no program a
// checkout names (secure, safeConfig), so they never reach an agent.
var gitVars = map[string]bool{
	"PATH": true, "USER": true, "LOGNAME": true, "TMPDIR": true,
	"SSH_AUTH_SOCK": true, "GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true,
	"http_proxy": true, "https_proxy": true, "no_proxy": true, "HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "GIT_SSL_CAINFO": true, "GIT_SSL_CAPATH": true,
}

// noHome is git's HOME. git reads ~/.config/git/ignore and ~/.config/git/attributes
// whatever GIT_CONFIG_GLOBAL says (and curl reads ~/.netrc): the hub user's files
// there would silently leave a turn's files out of its commit. Nothing may exist at
// this path.
const noHome = "/nonexistent"

// gitEnv is git's environment for unattended use: the allow-listed variables of
// environ, then never prompt for a password (a prompt would hang the hub, and nobody
// is at the terminal), no system or global config (the operator's ~/.gitconfig is
// not the hub's), no home, and English, so reasons read the same everywhere. A
// project's own credentials (own) leave out the hub user's ssh agent and commands.
func gitEnv(environ []string, own bool) []string {
	env := make([]string, 0, len(gitVars)+6)
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); gitVars[name] && !(own && hubOnly[name]) {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+noHome, "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C")
}

// lastLine picks the line of git's stderr that says what went wrong: the last
// "fatal:" or "error:" line (git may follow it with advice), else the last line,
// without its prefix. git's generic "Could not read from remote repository." gets the
// line before it (usually ssh's own complaint), which is the useful part.
func lastLine(stderr string) string {
	var lines []string
	for l := range strings.Lines(stderr) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	i := len(lines) - 1
	for j := i; j >= 0; j-- {
		if hasGitPrefix(lines[j]) {
			i = j
			break
		}
	}
	line := trimGitPrefix(lines[i])
	if line == "Could not read from remote repository." && i > 0 {
		line = "could not read from remote repository: " + trimGitPrefix(lines[i-1])
	}
	return line
}

var gitPrefixes = []string{"fatal: ", "error: ", "warning: "}

func hasGitPrefix(line string) bool {
	for _, p := range gitPrefixes[:2] {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func trimGitPrefix(line string) string {
	for _, p := range gitPrefixes {
		line = strings.TrimPrefix(line, p)
	}
	return line
}

// reasonOf turns a non-git error (a file system error) into a redacted reason.
func reasonOf(err error, r redactor) string {
	return r.apply(err.Error())
}
