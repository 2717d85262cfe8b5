package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// Sandbox modes (WSHUB_SANDBOX).
const (
	// SandboxBwrap runs every agent process inside bubblewrap: the default.
	SandboxBwrap = "bwrap"
	// SandboxNone runs agents as the hub's user with the hub's view of the machine.
	// Development on machines without user namespaces only: an agent can then read
	// everything the hub can.
	SandboxNone = "none"
)

// Where a sandboxed agent sees its workspace. Fixed paths rather than the host's keep
// the data directory's layout (and other workspaces' ids) out of the agent's view, and
// give agent CLIs that key their sessions by working directory (Claude Code) the same
// directory on every turn.
const (
	sandboxCheckout = "/workspace"
	sandboxHome     = "/home/agent"
	sandboxSession  = "/run/wshub/session"
	sandboxSelf     = "/run/wshub/bin/wshub"
	// sandboxUID is the user the agent appears to be. As root, the hub maps its own uid
	// to it in the new user namespace: agent CLIs that refuse to skip permission prompts
	// as root (Claude Code) then run, and the agent gains no capability on the host.
	sandboxUID = "1000"
)

// systemPaths are the host's system directories, visible read-only. A path that is a
// symlink on the host (merged /usr: /bin -> usr/bin) is recreated as the same symlink.
var systemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt"}

// etcPaths are the parts of /etc programs need to resolve names, verify TLS, find
// users and shared libraries. Not the whole of /etc: operators keep configuration
// (and sometimes credentials) there.
var etcPaths = []string{
	"/etc/alternatives", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/ssl", "/etc/pki",
	"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
	"/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/mime.types", "/etc/protocols",
	"/etc/services", "/etc/gitconfig", "/etc/inputrc", "/etc/bash.bashrc", "/etc/profile",
	"/etc/java-17-openjdk", "/etc/python3", "/etc/npmrc",
}

// SandboxConfig says how agent processes are confined.
type SandboxConfig struct {
	// Mode is SandboxBwrap ("" means it too) or SandboxNone.
	Mode string
	// Program is the bubblewrap executable; "" looks up "bwrap" on PATH.
	Program string
	// ReadOnly are more host paths made visible read-only, at the same path: agent CLIs
	// installed outside /usr and /opt (WSHUB_SANDBOX_READONLY).
	ReadOnly []string
	// Hidden are host directories an agent never sees, even below a visible path: the
	// hub's data directory (mirrors, blobs, other checkouts).
	Hidden []string
}

// bwrap builds bubblewrap command lines. Nil on a runner means no sandbox.
type bwrap struct {
	program  string
	readOnly []string
	hidden   []string
}

// mounts is what one turn's sandbox holds beyond the system.
type mounts struct {
	checkout, home string
	network        string
	// files are host files bound at the same path read-only (the command agent's
	// program), or at a fixed path writable (the session file).
	readOnlyFiles []string
	session       string
	// approvalDir is the turn's approval socket directory and self the wshub binary
	// (the permission prompt tool's server), bound at fixed paths.
	approvalDir, self string
}

// newBwrap checks that bubblewrap is installed and works here (user namespaces may be
// switched off), by running a trivial sandbox the way turns will run.
func newBwrap(ctx context.Context, cfg SandboxConfig) (*bwrap, error) {
	program := cfg.Program
	if program == "" {
		program = "bwrap"
	}
	path, err := exec.LookPath(program)
	if err != nil {
		return nil, fmt.Errorf("the agent sandbox needs bubblewrap, and %q was not found: install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or set WSHUB_SANDBOX=none to run agents unconfined (unsafe: they can then read everything the hub can)", program)
	}
	b := &bwrap{program: path}
	for _, p := range cfg.ReadOnly {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("WSHUB_SANDBOX_READONLY: %q is not an absolute path", p)
		}
		b.readOnly = append(b.readOnly, filepath.Clean(p))
	}
	for _, p := range cfg.Hidden {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("sandbox hidden path %q: %w", p, err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		b.hidden = append(b.hidden, abs)
	}
	for _, ro := range b.readOnly {
		for _, h := range b.hidden {
			if within(h, ro) {
				return nil, fmt.Errorf("WSHUB_SANDBOX_READONLY: %q would show agents the hub's data directory %q", ro, h)
			}
		}
	}
	if err := b.probe(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// probe runs `true` in a sandbox like a turn's.
func (b *bwrap) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "wshub-sandbox-probe-*")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(dir)
	for _, d := range []string{"checkout", "home"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("sandbox probe: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	args := b.args(mounts{checkout: filepath.Join(dir, "checkout"), home: filepath.Join(dir, "home"), network: core.NetworkNone})
	out, err := exec.CommandContext(ctx, b.program, append(args, "true")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("bubblewrap (%s) cannot start a sandbox on this machine: %w: %s (it needs unprivileged user namespaces, or root; or set WSHUB_SANDBOX=none, unsafe)", b.program, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// args is the bwrap command line up to and including "--"; the program and its
// arguments follow. Order matters: bwrap applies the operations in sequence, so the
// tmpfs masks over hidden paths come after the binds they hide things in.
func (b *bwrap) args(m mounts) []string {
	a := []string{
		// The sandbox dies with the hub (no agent outlives a killed hub) and is its own
		// session (no TIOCSTI into a terminal the hub may have).
		"--die-with-parent", "--new-session",
		// New user, PID, IPC, UTS and cgroup namespaces: the agent sees only its own
		// processes (not the hub's /proc/<pid>/environ), and when the turn's first
		// process exits the kernel ends every other one in the namespace.
		"--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID,
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "workspace",
	}
	if m.network == core.NetworkNone {
		a = append(a, "--unshare-net")
	}
	var visible []string
	for _, p := range systemPaths {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				a = append(a, "--symlink", target, p)
			}
		default:
			a = append(a, "--ro-bind", p, p)
			visible = append(visible, p)
		}
	}
	for _, p := range etcPaths {
		a = append(a, "--ro-bind-try", p, p)
	}
	// The sandbox's own /tmp first: a WSHUB_SANDBOX_READONLY path under the host's /tmp
	// is then bound onto it rather than hidden by it.
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	for _, p := range b.readOnly {
		a = append(a, "--ro-bind", p, p)
		visible = append(visible, p)
	}
	for _, h := range b.hidden {
		for _, v := range visible {
			if within(h, v) {
				a = append(a, "--tmpfs", h)
				break
			}
		}
	}
	for _, f := range m.readOnlyFiles {
		a = append(a, "--ro-bind", f, f)
	}
	a = append(a, "--bind", m.checkout, sandboxCheckout, "--bind", m.home, sandboxHome)
	if m.session != "" {
		a = append(a, "--bind", m.session, sandboxSession)
	}
	if m.approvalDir != "" {
		a = append(a, "--bind", m.approvalDir, sandboxApprovalDir, "--ro-bind", m.self, sandboxSelf)
	}
	// The root bwrap builds the sandbox on is a tmpfs; read-only once built, so the only
	// writable places are the checkout, the home, /tmp and the session file.
	return append(a, "--remount-ro", "/", "--chdir", sandboxCheckout, "--")
}

// visible reports whether a host path is inside the sandbox's read-only view.
func (b *bwrap) visible(path string) bool {
	for _, h := range b.hidden {
		if within(path, h) {
			return false
		}
	}
	for _, p := range append(append([]string(nil), systemPaths...), b.readOnly...) {
		if within(path, p) {
			return true
		}
	}
	return false
}

// within reports whether path is dir or below it (both clean and absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// errProgramHidden: the agent's program is installed where the sandbox does not show it.
var errProgramHidden = errors.New("outside the sandbox's read-only paths")
