//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// v1 makes turns' groups in cgroup v1: "wshub/<name>" below the hub's own group in
// each of the memory, pids and cpu hierarchies.
type v1 struct {
	hierarchy cgroup1.Hierarchy
	// base is "wshub" below the hub's own group, in each hierarchy: found once, where
	// the library's NestedPath reads /proc/self/cgroup and the mount table again on
	// every use (a group's creation, each of its files, its removal).
	base map[cgroup1.Name]string
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
	h := &v1{hierarchy: func() ([]cgroup1.Subsystem, error) { return kept, nil }, base: map[cgroup1.Name]string{}}
	nested := cgroup1.NestedPath("wshub")
	for _, s := range kept {
		p, err := nested(s.Name())
		if err != nil {
			return nil, fmt.Errorf("cgroup v1: the hub's own %s group: %w", s.Name(), err)
		}
		h.base[s.Name()] = p
	}
	return h, nil
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
	return func(n cgroup1.Name) (string, error) {
		base, ok := h.base[n]
		if !ok {
			return "", fmt.Errorf("cgroup v1: no %s hierarchy is used", n)
		}
		return filepath.Join(base, name), nil
	}
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
	// What an earlier turn of the workspace left (a killed hub's) is ended first.
	if err := (&v1Group{path: path, h: h}).remove(); err != nil {
		return nil, fmt.Errorf("the group of an earlier turn: %w", err)
	}
	r := &specs.LinuxResources{Pids: &specs.LinuxPids{Limit: &l.pids}}
	if l.memoryBytes > 0 {
		r.Memory = &specs.LinuxMemory{Limit: &l.memoryBytes}
	}
	if l.cpus > 0 {
		quota, period := int64(l.cpus)*cpuPeriod, uint64(cpuPeriod)
		r.CPU = &specs.LinuxCPU{Quota: &quota, Period: &period}
	}
	if _, err := cgroup1.New(path, r, h.opts()...); err != nil {
		return nil, err
	}
	g := &v1Group{path: path, h: h}
	if l.memoryBytes > 0 {
		// Swap counts too where the kernel accounts it (memsw): a turn cannot swap its
		// way past its memory. Without swap accounting there is no such file.
		_ = os.WriteFile(filepath.Join(g.dir(cgroup1.Memory), "memory.memsw.limit_in_bytes"), fmt.Appendf(nil, "%d", l.memoryBytes), 0)
	}
	return g, nil
}

// v1Group is one turn's group in each v1 hierarchy.
type v1Group struct {
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
	// The groups themselves first: no group is made below a turn's (its sandbox has
	// no cgroup file system), so the tree is walked only when a removal says otherwise.
	if err := killAll(g.lister(false)); err != nil {
		return err
	}
	removed := true
	for _, name := range turnControllers {
		if err := os.Remove(g.dir(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			removed = false
		}
	}
	if removed {
		return nil
	}
	// A group below, or a last process not quite gone: the whole tree, tried again.
	if err := killAll(g.lister(true)); err != nil {
		return err
	}
	// Removed here rather than by the library's Delete, which lists every process of
	// the tree again the way Processes does.
	var errs []error
	for _, name := range turnControllers {
		errs = append(errs, removeGroupDir(g.dir(name)))
	}
	return errors.Join(errs...)
}

// lister lists the group's processes in every hierarchy (and those of the groups
// below it, when deep), for killAll.
func (g *v1Group) lister(deep bool) func() ([]int, error) {
	return func() ([]int, error) {
		seen := map[int]bool{}
		var out []int
		for _, name := range turnControllers {
			err := procsUnder(g.dir(name), deep, func(pid int) {
				if !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			})
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
		}
		return out, nil
	}
}

// removeGroupDir removes the empty group at dir and those below it (none is gone
// already). A group whose last process has only just exited may be busy for a moment:
// tried again, as the library does.
func removeGroupDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := removeGroupDir(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if wait > 160*time.Millisecond {
			return fmt.Errorf("the cgroup %s could not be removed: %w", dir, err)
		}
		time.Sleep(wait)
	}
}

// procsUnder calls fn with every process in the group at dir (and the groups below it,
// when deep), read from their cgroup.procs: the library's Processes lstat's every file
// of every group on the way: a quarter of the hub's own CPU in a burst of turns.
func procsUnder(dir string, deep bool, fn func(pid int)) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			fn(pid)
		}
	}
	if !deep {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			if err := procsUnder(filepath.Join(dir, e.Name()), true, fn); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
