package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// Sandbox modes (WSHUB_SANDBOX).
const (
	// ModeBwrap runs every agent process inside bubblewrap: the default.
	ModeBwrap = "bwrap"
	// ModeNone runs agents as the hub's user with the hub's view of the machine.
	// Development on machines without user namespaces only: an agent can then read
	// everything the hub can.
	ModeNone = "none"
)

// Where a sandboxed agent sees its workspace. Fixed paths rather than the host's keep
// the data directory's layout (and other workspaces' ids) out of the agent's view, and
// give agent CLIs that key their sessions by working directory (Claude Code) the same
// directory on every turn.
const (
	CheckoutPath = "/workspace"
	HomePath     = "/home/agent"
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
// (and sometimes credentials) there. Not the package managers' and git's system-wide
// files either (/etc/npmrc, /etc/pip.conf, /etc/gitconfig): they are where registry
// tokens and credential helpers are set for the whole host. An operator who wants one
// shown names it in WSHUB_SANDBOX_READONLY.
var etcPaths = []string{
	"/etc/alternatives", "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/ssl", "/etc/pki",
	"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/nsswitch.conf", "/etc/gai.conf",
	"/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/mime.types", "/etc/protocols",
	"/etc/services", "/etc/inputrc", "/etc/bash.bashrc", "/etc/profile",
	"/etc/java-17-openjdk", "/etc/python3",
}

// Config says how agent processes are confined.
type Config struct {
	// Mode is ModeBwrap ("" means it too) or ModeNone.
	Mode string
	// Program is the bubblewrap executable; "" looks up "bwrap" on PATH.
	Program string
	// ReadOnly are more host paths made visible read-only, at the same path: agent CLIs
	// installed outside /usr and /opt (WSHUB_SANDBOX_READONLY).
	ReadOnly []string
	// Hidden are host directories an agent never sees, even below a visible path: the
	// hub's data directory (mirrors, blobs, other checkouts).
	Hidden []string
	// Pasta is passt's pasta, the user-mode network stack of sandboxes with the project
	// network "full"; "" looks up "pasta" on PATH.
	Pasta string
	// EgressAllow opens destinations that "full" refuses (private, link-local, the
	// host's own addresses and networks) to every sandbox: CIDRs and addresses (every
	// port and protocol) or host:port (TCP to that port; on the host's loopback, 127.0.0.1
	// or ::1, forwarded there by pasta), WSHUB_AGENT_EGRESS_ALLOW.
	EgressAllow []string
	// TmpBytes caps the sandbox's /tmp and ShmBytes its /dev/shm (0: DefaultTmpBytes,
	// DefaultShmBytes). Both are in memory, and without a cap one turn could fill the
	// host's RAM through them.
	TmpBytes, ShmBytes int64
	// KeptNetworks bounds how many workspaces' network namespaces (with their pasta)
	// are kept between turns (netkeep.go), and KeptNetworkBytes what they may take,
	// each counted as its pasta's buffers: more turns run faster, for memory held while
	// their workspaces are active. 0: DefaultKeptNetworks, DefaultKeptNetworkBytes;
	// KeptNetworks below 0 keeps none (every turn makes its own, and pays for it).
	KeptNetworks     int
	KeptNetworkBytes int64
	// KeepIdle is how long a kept namespace outlives its workspace's last turn (0:
	// DefaultKeepIdle): the workspace is then idle, or stopped.
	KeepIdle time.Duration
}

// Defaults of the sandbox's memory-backed filesystems.
const (
	DefaultTmpBytes = 1 << 30
	DefaultShmBytes = 256 << 20
)

// bwrap builds bubblewrap command lines. Nil on a Host means no sandbox.
type bwrap struct {
	program  string
	readOnly []string
	hidden   []string
	// pasta, allow and resolvConf are the "full" network's: pasta's path, the
	// exceptions to the refused destinations, and the resolv.conf naming sandboxDNS.
	pasta      string
	allow      []egressRule
	resolvConf string
	// tools are ip, timeout and cat, for the script of a "full" sandbox (netns.go).
	tools []string
	// nsenter enters a kept namespace pair (netkeep.go); "" keeps none.
	nsenter string
	// stateDir is hub-private: the FIFOs pasta says it is ready on.
	stateDir string
	// etc is the sandbox's /etc, nil where it is bound file by file.
	etc *etcView
	// tmpSize and shmSize are the byte caps of /tmp and /dev/shm, as bwrap's --size.
	tmpSize, shmSize string
}

// Mounts is what one turn's sandbox holds beyond the system.
type Mounts struct {
	// Checkout and Home are the workspace's directories on the host, bound writable at
	// CheckoutPath and HomePath.
	Checkout, Home string
	// Network is the project's network ("" is core.NetworkFull).
	Network string
	// ReadOnlyFiles are host files bound read-only at their own paths (the command
	// agent's program).
	ReadOnlyFiles []string
	// Binds are host paths bound at fixed paths of the sandbox, after the workspace's:
	// what the runner gives one turn (a session file, an approval socket's directory,
	// the wshub binary).
	Binds []Bind
}

// Bind is one host path bound into a turn's sandbox.
type Bind struct {
	Host, Sandbox string
	ReadOnly      bool
}

// newBwrap checks that bubblewrap and pasta are installed and work here (user
// namespaces may be switched off), by running trivial sandboxes the way turns will run.
// stateDir is hub-private: the sandboxes' resolv.conf is kept there.
func newBwrap(ctx context.Context, cfg Config, stateDir string) (*bwrap, error) {
	path, err := exec.LookPath(cmp.Or(cfg.Program, "bwrap"))
	if err != nil {
		return nil, fmt.Errorf("the agent sandbox needs bubblewrap, and %q was not found: install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or set WSHUB_SANDBOX=none to run agents unconfined (unsafe: they can then read everything the hub can)", cmp.Or(cfg.Program, "bwrap"))
	}
	pasta, err := exec.LookPath(cmp.Or(cfg.Pasta, "pasta"))
	if err != nil {
		return nil, fmt.Errorf("the agent sandbox's network (projects with network full) needs pasta, and %q was not found: install it (Debian and Ubuntu: apt-get install passt; Fedora: dnf install passt) or set WSHUB_SANDBOX=none to run agents unconfined (unsafe)", cmp.Or(cfg.Pasta, "pasta"))
	}
	var tools []string
	for _, t := range []struct{ name, pkg string }{{"ip", "iproute2"}, {"timeout", "coreutils"}, {"cat", "coreutils"}} {
		p, err := lookPathSbin(t.name)
		if err != nil {
			return nil, fmt.Errorf("the agent sandbox's network (projects with network full) needs %s, and it was not found: install it (Debian and Ubuntu: apt-get install %s) or set WSHUB_SANDBOX=none to run agents unconfined (unsafe)", t.name, t.pkg)
		}
		tools = append(tools, p)
	}
	// Without nsenter nothing is kept: every turn makes its namespaces, as it did.
	b := &bwrap{program: path, pasta: pasta, tools: tools, stateDir: stateDir, resolvConf: filepath.Join(stateDir, "resolv.conf"),
		tmpSize: strconv.FormatInt(cmp.Or(cfg.TmpBytes, DefaultTmpBytes), 10), shmSize: strconv.FormatInt(cmp.Or(cfg.ShmBytes, DefaultShmBytes), 10)}
	if cfg.KeptNetworks >= 0 {
		b.nsenter, _ = lookPathSbin("nsenter")
	}
	if b.allow, err = parseEgressAllow(ctx, cfg.EgressAllow, lookupIP); err != nil {
		return nil, err
	}
	if err := os.WriteFile(b.resolvConf, []byte("nameserver "+sandboxDNS+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("sandbox resolv.conf: %w", err)
	}
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
	if b.etc, err = newEtcView(stateDir, b.readOnly); err != nil {
		return nil, fmt.Errorf("the sandbox's /etc: %w", err)
	}
	if err := b.probe(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// probe runs `true` in sandboxes like a turn's, without a network and with "full".
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
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m := Mounts{Checkout: filepath.Join(dir, "checkout"), Home: filepath.Join(dir, "home"), Network: core.NetworkNone}
	if out, err := b.start(ctx, m); err != nil {
		return fmt.Errorf("bubblewrap (%s) cannot start a sandbox on this machine: %w: %s (it needs unprivileged user namespaces, or root; or set WSHUB_SANDBOX=none, unsafe)", b.program, err, out)
	}
	m.Network = core.NetworkFull
	if out, err := b.start(ctx, m); err != nil {
		return fmt.Errorf("pasta (%s) cannot connect a sandbox to the network on this machine: %w: %s (it needs /dev/net/tun readable and writable by the hub's user; or set WSHUB_SANDBOX=none, unsafe)", b.pasta, err, out)
	}
	return nil
}

// start runs `true` in a sandbox with m, as a turn runs, and returns what it printed.
func (b *bwrap) start(ctx context.Context, m Mounts) (string, error) {
	var out strings.Builder
	inv := Process{Stdout: &out, Grace: time.Second}
	b.command(&inv, m, []string{"true"})
	st := run(ctx, inv)
	said := strings.TrimSpace(out.String() + "\n" + st.Stderr)
	switch {
	case st.StartErr != nil:
		return said, st.StartErr
	case st.Interrupted:
		return said, ctx.Err()
	case st.Code != 0:
		return said, fmt.Errorf("exit status %d", st.Code)
	}
	return said, nil
}

// command makes inv run program (and its arguments) in a sandbox with m: bubblewrap,
// its options, and for a "full" network the namespaces it runs in (netns.go). The
// turn's descriptors from 3 on pass through.
func (b *bwrap) command(inv *Process, m Mounts, program []string) {
	inv.Path, inv.sandboxArgs = b.program, b.args(m)
	inv.Args = append([]string{"--args", inv.argsFD(), "--"}, program...)
	inv.netns = nil
	if network(m.Network) == core.NetworkFull {
		n := b.netConfig()
		inv.netns = &n
	}
}

// netConfig is the "full" network's configuration, without the host's part (onHost).
func (b *bwrap) netConfig() netConfig {
	return netConfig{Pasta: b.pasta, Tools: b.tools, Allow: b.allow, Dir: b.stateDir}
}

// lookPathSbin finds a program on PATH, or in the system directories a PATH without them
// (a service's, a user's) leaves out: ip is in /usr/sbin.
func lookPathSbin(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		if p, e := exec.LookPath(filepath.Join(dir, name)); e == nil {
			return p, nil
		}
	}
	return "", err
}

// network is the setting a turn runs with: "full" unless it says otherwise.
func network(n string) string { return cmp.Or(n, core.NetworkFull) }

// args are bwrap's options: "--" and the program with its arguments follow. Order matters: bwrap applies the operations in sequence, so the
// tmpfs masks over hidden paths come after the binds they hide things in.
func (b *bwrap) args(m Mounts) []string {
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
	// "none": a network namespace with only a loopback. "full": bwrap starts in a
	// network namespace of its own already (netns.go). "host": the host's namespace.
	if network(m.Network) == core.NetworkNone {
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
	a = b.etcArgs(a, m)
	// The sandbox's own /tmp first: a WSHUB_SANDBOX_READONLY path under the host's /tmp
	// is then bound onto it rather than hidden by it.
	// /tmp and /dev/shm are memory: each gets a cap, and the rest of /dev is read-only
	// (a file written there would be memory with no cap).
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--size", b.shmSize, "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
		"--size", b.tmpSize, "--tmpfs", "/tmp")
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
	for _, f := range m.ReadOnlyFiles {
		a = append(a, "--ro-bind", f, f)
	}
	a = append(a, "--bind", m.Checkout, CheckoutPath, "--bind", m.Home, HomePath)
	for _, b := range m.Binds {
		if b.ReadOnly {
			a = append(a, "--ro-bind", b.Host, b.Sandbox)
		} else {
			a = append(a, "--bind", b.Host, b.Sandbox)
		}
	}
	// The root bwrap builds the sandbox on is a tmpfs; read-only once built, so the only
	// writable places are the checkout, the home, /tmp and the writable binds.
	return append(a, "--remount-ro", "/", "--chdir", CheckoutPath)
}

// etcArgs appends the binds that make the sandbox's /etc: the view (etcview.go) with
// the directories bound on it, or, when the view cannot be had, each of etcPaths.
func (b *bwrap) etcArgs(a []string, m Mounts) []string {
	// The host's name servers may be where "full" does not reach.
	ownResolv := network(m.Network) == core.NetworkFull && b.resolvConf != ""
	if em, err := b.etc.refresh(); err == nil && !b.etcTargets(m) {
		a = append(a, "--ro-bind", em.view, "/etc")
		for _, p := range append(em.dirs, em.bound...) {
			a = append(a, "--ro-bind", p, p)
		}
		if ownResolv {
			a = append(a, "--ro-bind", b.resolvConf, "/etc/resolv.conf")
		}
		return a
	}
	for _, p := range etcPaths {
		if p == "/etc/resolv.conf" && ownResolv {
			a = append(a, "--ro-bind", b.resolvConf, p)
			continue
		}
		a = append(a, "--ro-bind-try", p, p)
	}
	return a
}

// etcTargets reports whether m binds something under /etc, which a read-only view
// there would have no place for.
func (b *bwrap) etcTargets(m Mounts) bool {
	for _, f := range m.ReadOnlyFiles {
		if within(f, "/etc") {
			return true
		}
	}
	for _, x := range m.Binds {
		if within(x.Sandbox, "/etc") {
			return true
		}
	}
	return false
}

// etcMounts is what a sandbox binds for /etc through the view.
type etcMounts struct {
	view string
	// dirs are the host's directories of etcPaths, and bound its files not copied (too
	// large, not regular): each bound on its empty place in the view.
	dirs, bound []string
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

// shownPath is the PATH list path without the directories the sandbox does not show:
// they would find nothing there, and would tell the agent about the hub's host (its
// home, its tools); defaultPath when none is left.
func (b *bwrap) shownPath(path string) string {
	var kept []string
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) && b.visible(filepath.Clean(dir)) && !slices.Contains(kept, dir) {
			kept = append(kept, dir)
		}
	}
	if len(kept) == 0 {
		return DefaultPath
	}
	return strings.Join(kept, string(filepath.ListSeparator))
}

// within reports whether path is dir or below it (both clean and absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// DefaultPath is a process's PATH when the hub has none.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
