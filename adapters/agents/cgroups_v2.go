//go:build linux

package agents

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// cgroup2Mount is where the unified hierarchy is mounted (the library's default too).
const cgroup2Mount = "/sys/fs/cgroup"

// v2Leaf is the group the hub moves itself into, inside the group it was started in: a
// v2 group that holds processes can give no controller to its children, so the hub's
// own group must hold only groups, the hub's and the turns'.
const v2Leaf = "hub"

// v2 makes turns' groups in cgroup v2: "turn-<name>" in the group the hub was
// started in (systemd: the service's, with Delegate=yes), beside the hub's leaf.
type v2 struct {
	parent *cgroup2.Manager
	group  string
}

func openV2() (*v2, error) {
	own, err := cgroup2.NestedGroupPath("")
	if err != nil {
		return nil, fmt.Errorf("cgroup v2: the hub's group: %w", err)
	}
	group := own
	if filepath.Base(own) == v2Leaf && own != "/" {
		group = filepath.Dir(own) // moved there already, by an earlier runner of this process
	}
	parent, err := cgroup2.Load(group)
	if err != nil {
		return nil, fmt.Errorf("cgroup v2 %s: %w", group, err)
	}
	avail, err := parent.Controllers()
	if err != nil {
		return nil, fmt.Errorf("cgroup v2 %s: %w", group, err)
	}
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !slices.Contains(avail, c) {
			return nil, fmt.Errorf("cgroup v2: the hub's group %s has no %s controller: give the hub a group of its own with the memory, pids and cpu controllers delegated (systemd: Delegate=yes)", group, c)
		}
	}
	if group == own {
		procs, err := parent.Procs(false)
		if err != nil {
			return nil, fmt.Errorf("cgroup v2 %s: %w", group, err)
		}
		self := uint64(os.Getpid())
		if slices.ContainsFunc(procs, func(p uint64) bool { return p != self }) {
			return nil, fmt.Errorf("cgroup v2: the hub's group %s holds other processes than the hub: give the hub a group of its own (systemd: a service with Delegate=yes)", group)
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
	return &v2{parent: parent, group: group}, nil
}

func (h *v2) String() string { return "cgroup v2 (memory, pids, cpu)" }

func (h *v2) dirs(name string) []string {
	return []string{filepath.Join(cgroup2Mount, h.group, "turn-"+name)}
}

func (h *v2) create(name string, l limits) (turnCgroup, error) {
	dir := h.dirs(name)[0]
	name = "turn-" + name
	if _, err := os.Stat(dir); err == nil {
		old, err := cgroup2.Load(filepath.Join(h.group, name))
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

func (g *v2Group) hit() (oomKilled, pidsRefused bool) {
	if st, err := g.m.Stat(); err == nil && st.MemoryEvents != nil {
		oomKilled = st.MemoryEvents.OomKill > 0
	}
	return oomKilled, readEvent(filepath.Join(g.dir, "pids.events"), "max") > 0
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
