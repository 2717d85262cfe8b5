package sandbox

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// The sandbox's tests run real processes under real bubblewrap and pasta (make test
// installs them): a shell command standing in for a malicious agent, run as the runner
// runs a command agent (sh -c in the checkout, the prompt on standard input), with no
// more environment than PATH and HOME.

// agentHost runs command as every turn's process on a Host.
type agentHost struct {
	*Host
	command string
	// grace is the time between SIGTERM and SIGKILL of an interrupted turn.
	grace time.Duration
}

// turnResult is what one turn's process did: how it ended, and its standard output
// without the last newline.
type turnResult struct {
	Exit
	Reply string
}

// completed reports whether the process ran and exited 0 within its limits.
func (r turnResult) completed() bool {
	return r.StartErr == nil && !r.Interrupted && r.Code == 0 && r.Limit == ""
}

// newHost is New with opt, its state directory made absolute and made, as the runner
// gives it.
func newHost(t testing.TB, opt Options) (*Host, error) {
	t.Helper()
	dir, err := filepath.Abs(opt.StateDir)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		t.Fatal(err)
	}
	opt.StateDir = dir
	return New(context.Background(), opt)
}

// newAgentHost is a host made with opt, running command.
func newAgentHost(t testing.TB, opt Options, command string) *agentHost {
	t.Helper()
	h, err := newHost(t, opt)
	if err != nil {
		t.Fatalf("expected the sandbox to work here (make test installs bubblewrap and pasta): %v", err)
	}
	t.Cleanup(h.Close) // what it keeps and prepares for workspaces' next turns
	return &agentHost{Host: h, command: command}
}

// RunTurn ends what an earlier turn of the workspace left, then runs the command in
// the turn's sandbox; a command that is an absolute path is shown read-only, as the
// runner shows a command agent's program.
func (a *agentHost) RunTurn(ctx context.Context, req core.TurnRequest) turnResult {
	if err := a.EndStrays(req.WorkspaceID); err != nil {
		return turnResult{Exit: Exit{StartErr: err}}
	}
	if err := os.MkdirAll(req.Home, 0o700); err != nil {
		return turnResult{Exit: Exit{StartErr: err}}
	}
	m := Mounts{Checkout: req.Dir, Home: req.Home, Network: req.Network}
	home := req.Home
	if a.Confined() {
		home = HomePath
	}
	if filepath.IsAbs(a.command) && !a.Visible(a.command) {
		m.ReadOnlyFiles = []string{a.command}
	}
	var out strings.Builder
	p := Process{Path: "/bin/sh", Args: []string{"-c", a.command}, Stdin: req.Prompt, Stdout: &out, Grace: a.grace,
		Env: []string{"PATH=" + a.ShownPath(cmp.Or(os.Getenv("PATH"), DefaultPath)), "HOME=" + home}}
	st := a.Run(ctx, req.WorkspaceID, req.Size, a.Wrap(p, m))
	return turnResult{Exit: st, Reply: strings.TrimSuffix(out.String(), "\n")}
}

// sandboxed is a host with the bubblewrap sandbox, hiding l's data directory,
// running command.
func sandboxed(t *testing.T, l hostLayout, command string) *agentHost {
	t.Helper()
	return newAgentHost(t, Options{StateDir: filepath.Join(l.data, "run"), Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}}}, command)
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// processGone reports whether pid has exited (a zombie waiting for its reaper counts).
func processGone(pid int) bool {
	st, err := readStat(pid)
	return err != nil || st.state == "Z" || st.state == "X"
}

// waitForFile waits until path exists: the process under test got that far.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	eventually.Eventually(t, 10*time.Second, "the process to create "+path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}
