package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
)

// Host confines one runner's turns on this machine: each turn's processes run in a
// bubblewrap sandbox (unless it is off) with the project's network, in a cgroup held to
// the workspace's size (unless limits are off), and what a turn of a crashed hub left
// running is ended before the workspace's next one. What runs there, and what its
// output means, is the runner's (adapters/agents).
type Host struct {
	// bwrap is nil when processes run unconfined (ModeNone).
	bwrap *bwrap
	// cgroups makes each turn's cgroup (limits.go); nil when limits are off.
	cgroups cgroupHierarchy
	limits  LimitsConfig
	// limitsMissing says why turns run without limits that were asked for (an Optional
	// LimitsConfig where no cgroup could be had); "" otherwise.
	limitsMissing string
	// scope keeps this host's groups apart from other runners' on the machine (turnName).
	scope string
	// stateDir is hub-private: the running turns' process records, pasta's FIFOs.
	stateDir string
	// keeper keeps workspaces' network namespaces between turns; nil keeps none.
	keeper *netKeeper
	// prepared starts workspaces' next turns' first processes (prepared.go); nil
	// prepares none.
	prepared *preparer
}

// Options configure a Host.
type Options struct {
	// Sandbox confines processes; the zero value is bubblewrap.
	Sandbox Config
	// Limits hold each turn to its workspace's size; the zero value is a cgroup per
	// turn.
	Limits LimitsConfig
	// StateDir is an absolute directory of the hub's, which exists, that no sandbox
	// shows.
	StateDir string
	// Log gets what was done to the host at start (a systemd scope made for the turns'
	// cgroups); nil: nothing is logged.
	Log *slog.Logger
}

// New returns a host. With the bubblewrap sandbox it checks that bubblewrap works
// here, and fails saying how to install it when it does not: the hub must not run
// agents unconfined because a package is missing. Likewise, unless limits are off, it
// checks that a turn's cgroup can be made, and fails saying why when it cannot.
func New(ctx context.Context, opt Options) (*Host, error) {
	if runtime.GOOS != "linux" {
		return nil, ErrNeedsLinux
	}
	// Before any process starts, whatever launched the hub.
	closeInheritedOnExec()
	if !filepath.IsAbs(opt.StateDir) {
		return nil, fmt.Errorf("sandbox: the state directory %q is not absolute", opt.StateDir)
	}
	h := &Host{limits: opt.Limits, scope: cgroupScope(opt.StateDir), stateDir: opt.StateDir}
	var err error
	switch opt.Sandbox.Mode {
	case "", ModeBwrap:
		if h.bwrap, err = newBwrap(ctx, opt.Sandbox, opt.StateDir); err != nil {
			return nil, err
		}
		if h.bwrap.nsenter != "" {
			h.keeper = newNetKeeper(opt.Sandbox, h.bwrap.nsenter)
		}
	case ModeNone:
	default:
		return nil, fmt.Errorf("WSHUB_SANDBOX is %q or %q, not %q", ModeBwrap, ModeNone, opt.Sandbox.Mode)
	}
	switch opt.Limits.Mode {
	case "", LimitsCgroup:
		open := func() (cgroupHierarchy, error) { return newCgroups(cmp.Or(opt.Log, slog.New(slog.DiscardHandler))) }
		if h.cgroups, h.limitsMissing, err = opt.Limits.open(open); err != nil {
			return nil, err
		}
	case LimitsOff:
	default:
		return nil, fmt.Errorf("WSHUB_AGENT_LIMITS is %q or %q, not %q", LimitsCgroup, LimitsOff, opt.Limits.Mode)
	}
	h.prepareTurns(opt.Sandbox)
	return h, nil
}

// Close ends the network namespaces kept for workspaces' next turns (they end with the
// hub's process too).
func (h *Host) Close() {
	h.prepared.close() // first: they may be in kept namespaces
	if h.keeper != nil {
		h.keeper.close()
	}
}

// Limits says how turns are held to their workspace's size, for the start-up log and
// /readyz: the cgroup hierarchy ("cgroup v1 (memory, pids, cpu)"), or LimitsOff.
func (h *Host) Limits() string {
	if h.cgroups == nil {
		return LimitsOff
	}
	return h.cgroups.String()
}

// LimitsMissing says, in a sentence for the start-up log, why turns run without the
// limits asked for (LimitsConfig.Optional): "" when they have them, or were turned off.
func (h *Host) LimitsMissing() string { return h.limitsMissing }

// Confined reports whether processes run in bubblewrap (they see the sandbox's paths,
// CheckoutPath and HomePath), rather than as the hub's user with its view (ModeNone).
func (h *Host) Confined() bool { return h.bwrap != nil }

// Wrap makes p, a program to run with the workspace's checkout as its working
// directory, into the process that runs it in a sandbox holding m: bubblewrap and its
// options (none when the sandbox is off), started in / (the shell that runs first
// for the cgroup and network would put the checkout's host path in PWD, which
// bubblewrap, pid 1 in the sandbox, would show in its /proc/1/environ; bubblewrap
// changes into CheckoutPath itself).
func (h *Host) Wrap(p Process, m Mounts) Process {
	if h.bwrap == nil {
		p.Dir = m.Checkout
		return p
	}
	p.Dir = "/"
	h.bwrap.command(&p, m, append([]string{p.Path}, p.Args...))
	return p
}

// Visible reports whether a host path is inside the sandbox's read-only view (every
// path is, with the sandbox off).
func (h *Host) Visible(path string) bool { return h.bwrap == nil || h.bwrap.visible(path) }

// Shown is the path to run path by inside the sandbox: path itself, or for a link
// outside the sandbox's paths, what it names; ok is false when neither is shown.
func (h *Host) Shown(path string) (string, bool) {
	if h.Visible(path) {
		return path, true
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && h.bwrap.visible(real) {
		return real, true
	}
	return "", false
}

// ShownPath is the PATH list path without the directories the sandbox does not show
// (DefaultPath when none is left); path itself with the sandbox off.
func (h *Host) ShownPath(path string) string {
	if h.bwrap == nil {
		return path
	}
	return h.bwrap.shownPath(path)
}

// SafeName keeps a workspace id usable as part of a file name.
func SafeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, id)
}
