package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/nofollow"
)

// Where the runner's own files for a turn appear in the sandbox: fixed paths, like the
// checkout's, so nothing of the host's layout shows.
const (
	sandboxSession = "/run/wshub/session"
	sandboxSelf    = "/run/wshub/bin/wshub"
	// sandboxApprovalDir is where the approval socket's directory is bound.
	sandboxApprovalDir = "/run/wshub/approval"
)

// errProgramHidden: the agent's program is installed where the sandbox does not show it.
var errProgramHidden = errors.New("outside the sandbox's read-only paths")

// placement is where one turn's process runs: the paths it sees, and what its sandbox
// holds (inside bubblewrap, or as it is when the sandbox is off).
type placement struct {
	r *Runner
	// dir and home are the checkout and home directory as the agent sees them.
	dir, home string
	m         sandbox.Mounts
}

func (r *Runner) place(req core.TurnRequest) *placement {
	// bwrap resolves bind sources against its working directory (the checkout): a
	// relative WSHUB_DATA_DIR (".data", the default) must not reach it as such.
	if abs, err := filepath.Abs(req.Dir); err == nil {
		req.Dir = abs
	}
	if abs, err := filepath.Abs(req.Home); err == nil {
		req.Home = abs
	}
	p := &placement{r: r, dir: req.Dir, home: req.Home,
		m: sandbox.Mounts{Checkout: req.Dir, Home: req.Home, Network: req.Network}}
	if r.box.Confined() {
		p.dir, p.home = sandbox.CheckoutPath, sandbox.HomePath
	}
	return p
}

// program checks that a CLI program found on the hub's PATH is visible inside the
// sandbox, and returns the path to run it by.
func (p *placement) program(name, path string) (string, error) {
	if run, ok := p.r.box.Shown(path); ok {
		return run, nil
	}
	return "", hiddenProgram(name, path)
}

// hiddenProgram says a program is where the sandbox does not show it, and the fix.
func hiddenProgram(name, path string) error {
	return fmt.Errorf("%s is installed at %s, %w (/usr, /opt and WSHUB_SANDBOX_READONLY): install it under /usr or /opt, or add its directory to WSHUB_SANDBOX_READONLY", name, path, errProgramHidden)
}

// showCommand makes the files a command agent's command names by absolute path (its
// program, an interpreter's script: WSHUB_AGENT_1_COMMAND='python3 /srv/agent.py')
// visible, read-only at their own paths: the operator named them as the agent.
// Anything else the command reads must be under a system path or
// WSHUB_SANDBOX_READONLY.
func (p *placement) showCommand(command string) {
	for _, f := range commandFiles(command) {
		if !p.r.box.Visible(f) {
			p.m.ReadOnlyFiles = append(p.m.ReadOnlyFiles, f)
		}
	}
}

// sessionFile gives the agent a file to report its session in: a hub-private file on
// the host, bound into the sandbox at a fixed path. It returns the host path and the
// path the agent uses. The file is the workspace's, emptied for each turn and kept
// between them (the same file, so a sandbox prepared for the workspace's next turn
// has it bound already: the sandbox's prepared.go).
func (p *placement) sessionFile(workspaceID string) (host, agent string, err error) {
	path := filepath.Join(p.r.stateDir, sandbox.SafeName(workspaceID)+".session")
	// Never through a link, nor blocking on a FIFO: unsandboxed, the agent could have
	// put either there.
	f, err := nofollow.Open(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		_ = os.Remove(path)
		f, err = nofollow.Open(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NONBLOCK, 0o600)
	}
	if err != nil {
		return "", "", err
	}
	_ = f.Close()
	if !p.r.box.Confined() {
		return path, path, nil
	}
	p.m.Binds = append(p.m.Binds, sandbox.Bind{Host: path, Sandbox: sandboxSession})
	return path, sandboxSession, nil
}

// approvals makes the turn's approval socket and the wshub binary reachable by the
// agent's permission prompt tool, and returns the paths it uses for them.
func (p *placement) approvals(s *approvalSocket) (socket, self string) {
	if !p.r.box.Confined() {
		return s.path, p.r.self
	}
	p.m.Binds = append(p.m.Binds, sandbox.Bind{Host: s.dir, Sandbox: sandboxApprovalDir},
		sandbox.Bind{Host: p.r.self, Sandbox: sandboxSelf, ReadOnly: true})
	return sandboxApprovalDir + "/" + approvalSocketName, sandboxSelf
}

// wrap makes inv, the agent's program, the process that runs it in the turn's sandbox.
func (p *placement) wrap(inv sandbox.Process) sandbox.Process { return p.r.box.Wrap(inv, p.m) }
