package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wshub/wshub/core"
)

// placement is where one turn's process runs: the paths it sees, and how it is
// started (inside bubblewrap, or as it is when the sandbox is off).
type placement struct {
	r *Runner
	// dir and home are the checkout and home directory as the agent sees them.
	dir, home string
	// hostDir is the checkout on the host, the working directory of an agent run
	// without the sandbox.
	hostDir string
	m       mounts
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
	p := &placement{r: r, dir: req.Dir, home: req.Home, hostDir: req.Dir,
		m: mounts{checkout: req.Dir, home: req.Home, network: req.Network}}
	if r.sandbox != nil {
		p.dir, p.home = sandboxCheckout, sandboxHome
	}
	return p
}

// program checks that a CLI program found on the hub's PATH is visible inside the
// sandbox, and returns the path to run it by.
func (p *placement) program(name, path string) (string, error) {
	if run, ok := p.r.shown(path); ok {
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
	if p.r.sandbox == nil {
		return
	}
	for _, f := range commandFiles(command) {
		if !p.r.sandbox.visible(f) {
			p.m.readOnlyFiles = append(p.m.readOnlyFiles, f)
		}
	}
}

// sessionFile gives the agent a file to report its session in: a hub-private file on
// the host, bound into the sandbox at a fixed path. It returns the host path and the
// path the agent uses.
func (p *placement) sessionFile(workspaceID string) (host, agent string, err error) {
	f, err := os.CreateTemp(p.r.stateDir, safeName(workspaceID)+"-session-*")
	if err != nil {
		return "", "", err
	}
	_ = f.Close()
	if p.r.sandbox == nil {
		return f.Name(), f.Name(), nil
	}
	p.m.session = f.Name()
	return f.Name(), sandboxSession, nil
}

// approvals makes the turn's approval socket and the wshub binary reachable by the
// agent's permission prompt tool, and returns the paths it uses for them.
func (p *placement) approvals(s *approvalSocket) (socket, self string) {
	if p.r.sandbox == nil {
		return s.path, p.r.self
	}
	p.m.approvalDir, p.m.self = s.dir, p.r.self
	return sandboxApprovalDir + "/" + approvalSocketName, sandboxSelf
}

// wrap turns an invocation of path with args into the sandboxed one.
func (p *placement) wrap(inv invocation) invocation {
	if p.r.sandbox == nil {
		inv.dir = p.hostDir
		return inv
	}
	// Started in /, not the checkout: the shell that runs first (cgroup, network) would
	// put the checkout's host path in PWD, which bubblewrap, pid 1 in the sandbox, would
	// show in its /proc/1/environ. Every path bubblewrap is given is absolute, and it
	// changes into /workspace itself.
	inv.dir = "/"
	p.r.sandbox.command(&inv, p.m, append([]string{inv.path}, inv.args...))
	return inv
}

// safeName keeps a workspace id usable as part of a file name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, id)
}
