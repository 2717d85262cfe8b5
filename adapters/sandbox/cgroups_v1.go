//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// v1 makes turns' groups in cgroup v1: "wshub/<name>" below the hub's own group in
// each of the memory, pids and cpu hierarchies.
type v1 struct {
	hierarchy cgroup1.Hierarchy
}

func openV1() (*v1, error) {
	all, err := cgroup1.Default()
	if err != nil {
		return nil, fmt.Errorf("cgroup v1: %w", err)
	}
	var kept []cgroup1.Subsystem
	for _, name := range turnControllers {
		found := false
		for _, s := range all {
			if s.Name() == name {
				kept, found = append(kept, s), true
			}
		}
		if !found {
			return nil, fmt.Errorf("cgroup v1: the %s controller is not mounted", name)
		}
	}
	return &v1{hierarchy: func() ([]cgroup1.Subsystem, error) { return kept, nil }}, nil
}

func (h *v1) String() string { return "cgroup v1 (memory, pids, cpu)" }

// opts: every controller is required, none is skipped.
func (h *v1) opts() []cgroup1.InitOpts {
	return []cgroup1.InitOpts{cgroup1.WithHierarchy(h.hierarchy), func(c *cgroup1.InitConfig) error {
		c.InitCheck = func(s cgroup1.Subsystem, _ cgroup1.Path, err error) error {
			return fmt.Errorf("the %s controller: %w", s.Name(), err)
		}
		return nil
	}}
}

// path is the group name below the hub's own in each hierarchy.
func (h *v1) path(name string) cgroup1.Path {
	return cgroup1.NestedPath(filepath.Join("wshub", name))
}

func (h *v1) dirs(name string) []string {
	g := &v1Group{path: h.path(name), h: h}
	out := make([]string, 0, len(turnControllers))
	for _, name := range turnControllers {
		out = append(out, g.dir(name))
	}
	return out
}

func (h *v1) create(name string, l limits) (turnCgroup, error) {
	path := h.path(name)
	if old, err := cgroup1.Load(path, h.opts()...); err == nil {
		if err := (&v1Group{cg: old, path: path, h: h}).remove(); err != nil {
			return nil, fmt.Errorf("the group of an earlier turn: %w", err)
		}
	}
	r := &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &l.pids}}
	if l.memoryBytes > 0 {
		r.Memory = &specs.LinuxMemory{Limit: &l.memoryBytes}
	}
	if l.cpus > 0 {
		quota, period := int64(l.cpus)*cpuPeriod, uint64(cpuPeriod)
		r.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	}
	cg, err := cgroup1.New(path, r, h.opts()...)
	if err != nil {
		return nil, err
	}
	g := &v1Group{cg: cg, path: path, h: h}
	if l.memoryBytes > 0 {
		// Swap counts too where the kernel accounts it (memsw): a turn cannot swap its
		// way past its memory. Without swap accounting there is no such file.
		_ = os.WriteFile(filepath.Join(g.dir(cgroup1.Memory), "memory.memsw.limit_in_bytes"), fmt.Appendf(nil, "%d", l.memoryBytes), 0)
	}
	return g, nil
}

// v1Group is one turn's group in each v1 hierarchy.
type v1Group struct {
	cg   cgroup1.Cgroup
	path cgroup1.Path
	h    *v1
}

// dir is the group's directory in the hierarchy of controller name.
func (g *v1Group) dir(name cgroup1.Name) string {
	subs, _ := g.h.hierarchy()
	p, _ := g.path(name)
	for _, s := range subs {
		if s.Name() == name {
			if pt, ok := s.(interface{ Path(string) string }); ok {
				return pt.Path(p)
			}
		}
	}
	return ""
}

func (g *v1Group) procs() []string {
	out := make([]string, 0, len(turnControllers))
	for _, name := range turnControllers {
		out = append(out, filepath.Join(g.dir(name), "cgroup.procs"))
	}
	return out
}

// hit reads the two counters it needs, not the library's Stat, which reads every
// statistics file of every controller (a millisecond on each turn's path).
func (g *v1Group) hit() (oomKilled, pidsRefused bool) {
	return readEvent(filepath.Join(g.dir(cgroup1.Memory), "memory.oom_control"), "oom_kill") > 0,
		readEvent(filepath.Join(g.dir(cgroup1.Pids), "pids.events"), "max") > 0
}

// remove kills the group's processes until none is left. v1 has no cgroup.kill: a
// process listed may exit before its kill, and its pid be reused, but only after the
// kernel has gone round the whole pid space meanwhile.
func (g *v1Group) remove() error {
	list := func() ([]int, error) {
		seen := map[int]bool{}
		var out []int
		for _, name := range turnControllers {
			ps, err := g.cg.Processes(name, true)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			for _, p := range ps {
				if !seen[p.Pid] {
					seen[p.Pid] = true
					out = append(out, p.Pid)
				}
			}
		}
		return out, nil
	}
	if err := killAll(list); err != nil {
		return err
	}
	if err := g.cg.Delete(); err != nil && !errors.Is(err, cgroup1.ErrCgroupDeleted) {
		return err
	}
	return nil
}
