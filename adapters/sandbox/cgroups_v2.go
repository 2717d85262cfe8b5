//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// cgroup2Mount is where the unified hierarchy is mounted (the library's default too).
const cgroup2Mount = "/sys/fs/cgroup"

// v2Leaf is the group the hub moves itself into, inside the group it was started in: a
// v2 group that holds processes can give no controller to its children, so the hub's
// own group must hold only groups, the hub's and the turns'.
const v2Leaf = "hub"

// v2 makes turns' groups in cgroup v2: "turn-<name>" in the group the hub was
// started in (systemd: the service's, with Delegate=yes; or the transient scope systemd
// made for it, cgroups_v2_scope.go), beside the hub's leaf.
type v2 struct {
	parent *cgroup2.Manager
	mount  string
	group  string
}

// v2Host is where the v2 code finds the hub's group and makes turns' groups: the
// unified hierarchy's mount, the file naming the hub's own group, and systemd, which can
// move the hub into a delegated scope of its own. Tests point them at a temporary
// directory and at a bus of their own.
type v2Host struct {
	mount string // cgroup2Mount
	self  string // /proc/self/cgroup
	pid   int
	// scope asks systemd for a transient scope with Delegate=yes holding pid, and
	// returns its unit's name once systemd has moved pid there.
	scope func() (string, error)
	log   *slog.Logger
}

// openV2 takes the group the hub runs in where it can hold turns' groups; where it
// cannot (a hub started from a terminal shares the shell's session scope, whose
// controllers are not delegated), it asks systemd for a scope of its own, as rootless
// container engines do, and takes that.
func openV2(host v2Host) (*v2, error) {
	h, why := host.useGroup()
	if why == nil {
		return h, nil
	}
	unit, err := host.scope()
	if err != nil {
		return nil, fmt.Errorf("%w; and systemd gave the hub no delegated scope of its own (%v): run the hub as a systemd service with Delegate=yes, or from a desktop session whose systemd user manager is reachable over D-Bus", why, err)
	}
	if h, err = host.useGroup(); err != nil {
		return nil, fmt.Errorf("in the scope systemd made for the hub, %s: %w", unit, err)
	}
	host.log.Info(fmt.Sprintf("cgroup v2: the hub's own group could not hold turns' groups (%v), so systemd moved the hub into a transient scope, %s, with Delegate=yes", why, unit))
	return h, nil
}

// useGroup takes the hub's group, moving the hub into its leaf, when it can hold turns'
// groups: it has the controllers they need and no process but the hub's.
func (host v2Host) useGroup() (*v2, error) {
	own, err := ownGroup(host.self)
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: the hub's group: %w", err)
	}
	group := own
	if filepath.Base(own) == v2Leaf && own != "/" {
		group = filepath.Dir(own) // moved there already, by an earlier runner of this process
	}
	parent, err := cgroup2.Load(group, cgroup2.WithMountpoint(host.mount))
	if err != nil {
		return nil, fmt.Errorf("cgroup v2 %s: %w", group, err)
	}
	avail, err := parent.Controllers()
	if err != nil {
		return nil, fmt.Errorf("cgroup v2 %s: %w", group, err)
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !slices.Contains(avail, c) {
			return nil, fmt.Errorf("cgroup v2: the hub's group %s has no %s controller (the memory, pids and cpu controllers must be delegated to it; a user's systemd gets them from user@.service's Delegate=)", group, c)
		}
	}
	if group == own {
		procs, err := parent.Procs(false)
		if err != nil {
			return nil, fmt.Errorf("cgroup v2 %s: %w", group, err)
		}
		self := uint64(host.pid)
		if slices.ContainsFunc(procs, func(p uint64) bool { return p != self }) {
			return nil, fmt.Errorf("cgroup v2: the hub's group %s holds other processes than the hub", group)
		}
		if len(procs) > 0 {
			leaf, err := parent.NewChild(v2Leaf, nil)
			if err == nil {
				err = leaf.AddProc(self)
			}
			if err != nil {
				return nil, fmt.Errorf("cgroup v2: moving the hub into %s/%s: %w", group, v2Leaf, err)
			}
		}
	}
	return &v2{parent: parent, mount: host.mount, group: group}, nil
}

// ownGroup reads the process's group in the unified hierarchy from path, a
// /proc/<pid>/cgroup file: its "0::" line.
func ownGroup(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if g, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return g, nil
		}
	}
	return "", fmt.Errorf("%s names no cgroup v2 group", path)
}

func (h *v2) String() string { return "cgroup v2 (memory, pids, cpu)" }

func (h *v2) dirs(name string) []string {
	return []string{filepath.Join(h.mount, h.group, "turn-"+name)}
}

func (h *v2) create(name string, l limits) (turnCgroup, error) {
	dir := h.dirs(name)[0]
	name = "turn-" + name
	if _, err := os.Stat(dir); err == nil {
		old, err := cgroup2.Load(filepath.Join(h.group, name), cgroup2.WithMountpoint(h.mount))
		if err == nil {
			err = (&v2Group{m: old, dir: dir}).remove()
		}
		if err != nil {
			return nil, fmt.Errorf("the group of an earlier turn: %w", err)
		}
	}
	r := &cgroup2.Resources{Pids: &cgroup2.Pids{Max: l.pids}}
	if l.memoryBytes > 0 {
		r.Memory = &cgroup2.Memory{Max: &l.memoryBytes}
	}
	if l.cpus > 0 {
		quota, period := int64(l.cpus)*cpuPeriod, uint64(cpuPeriod)
		r.CPU = &cgroup2.CPU{Max: cgroup2.NewCPUMax(&quota, &period)}
	}
	m, err := h.parent.NewChild(name, r)
	if err != nil {
		return nil, err
	}
	if l.memoryBytes > 0 {
		// No swapping past the memory either; absent where swap is not accounted.
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0)
	}
	return &v2Group{m: m, dir: dir}, nil
}

// v2Group is one turn's group.
type v2Group struct {
	m   *cgroup2.Manager
	dir string
}

func (g *v2Group) procs() []string { return []string{filepath.Join(g.dir, "cgroup.procs")} }

// hit reads the two counters it needs, not the library's Stat, which reads every
// statistics file of every controller (a millisecond on each turn's path).
func (g *v2Group) hit() (oomKilled, pidsRefused bool) {
	return readEvent(filepath.Join(g.dir, "memory.events"), "oom_kill") > 0,
		readEvent(filepath.Join(g.dir, "pids.events"), "max") > 0
}

// remove kills the group at once (cgroup.kill, or the library's freeze-and-kill on
// kernels before 5.14), then what may still be listed, until it is empty.
func (g *v2Group) remove() error {
	if err := g.m.Kill(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	list := func() ([]int, error) {
		ps, err := g.m.Procs(true)
		out := make([]int, len(ps))
		for i, p := range ps {
			out[i] = int(p)
		}
		return out, err
	}
	if err := killAll(list); err != nil {
		return err
	}
	if err := g.m.Delete(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
