//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wshub/wshub/core"
)

// A turn's process group is recorded in <stateDir>/<workspace>.pid while it runs:
// "<pgid> <start time> <boot id>". A clean turn removes the record. A record found when
// the next turn starts means the hub died mid-turn; whatever is left of that group is
// killed, and waited for, before the new turn touches the checkout. In the sandbox
// this is a second line of defence: bubblewrap's --die-with-parent already ends the
// sandbox with the hub, and the PID namespace ends every process in it with its first.

// Run runs inv (made by Wrap) as the workspace's turn, in a cgroup of its own held to the turn's size
// (unless limits are off), keeping the record of its process group while it runs.
// Whatever is left in the cgroup when the turn's process has ended is killed, and the
// cgroup removed.
func (h *Host) Run(ctx context.Context, workspaceID string, size core.ProviderSize, inv Process) Exit {
	inv, released := h.keep(workspaceID, inv)
	defer released()
	var g turnCgroup
	var l limits
	if h.cgroups != nil {
		l = h.limits.limitsFor(size)
	}
	shape, preparable := h.prepared.shapeOf(inv, l)
	inv.started = func(pid int) { h.recordTurn(workspaceID, pid) }
	var st Exit
	b := h.prepared.take(workspaceID, shape, preparable)
	if b != nil {
		g = b.g
		st = b.run(ctx, inv)
	} else {
		if h.cgroups != nil {
			var err error
			if g, err = h.cgroups.create(turnName(h.scope, workspaceID), l); err != nil {
				return Exit{StartErr: fmt.Errorf("the turn's cgroup could not be made: %v", err)}
			}
			inv = inv.join(g)
		}
		st = run(ctx, inv)
	}
	h.forgetTurn(workspaceID)
	if g != nil {
		oom, pids := g.hit()
		st.Limit = limitSentence(l, oom, pids)
		// Best effort: a group that outlives its turn is ended and made anew by the
		// workspace's next turn.
		if b != nil {
			h.prepared.removeLater(workspaceID, g)
		} else {
			_ = g.remove()
		}
	}
	if preparable && ctx.Err() == nil {
		h.prepared.prepare(workspaceID, shape)
	}
	return st
}

// strayWait bounds how long EndStrays waits for killed processes to be gone.
const strayWait = 10 * time.Second

func (h *Host) pidFile(workspaceID string) string {
	return filepath.Join(h.stateDir, SafeName(workspaceID)+".pid")
}

// recordTurn writes the record of a started turn.
func (h *Host) recordTurn(workspaceID string, pid int) {
	start, err := startTime(pid)
	if err != nil {
		return // the process is already gone: nothing to end later
	}
	line := fmt.Sprintf("%d %d %s\n", pid, start, bootID())
	// Best effort: without a record, a crash leaves the sandbox to die with the hub.
	_ = os.WriteFile(h.pidFile(workspaceID), []byte(line), 0o600)
}

// forgetTurn removes the record of a turn that ended.
func (h *Host) forgetTurn(workspaceID string) { _ = os.Remove(h.pidFile(workspaceID)) }

// EndStrays kills what is left of the workspace's previous turn, if anything.
func (h *Host) EndStrays(workspaceID string) error {
	b, err := os.ReadFile(h.pidFile(workspaceID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var pgid int
	var start uint64
	var boot string
	if n, _ := fmt.Sscanf(string(b), "%d %d %s", &pgid, &start, &boot); n != 3 || pgid <= 1 {
		h.forgetTurn(workspaceID)
		return nil
	}
	if boot != bootID() { // the machine restarted since: nothing of that turn is alive
		h.forgetTurn(workspaceID)
		return nil
	}
	deadline := time.Now().Add(strayWait)
	for {
		left := groupMembers(pgid, start)
		if len(left) == 0 {
			h.forgetTurn(workspaceID)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d process(es) of process group %d still alive after %s", len(left), pgid, strayWait)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupMembers lists the live (not zombie) processes of group pgid that started no
// earlier than start: a group id reused by an unrelated later process group would have
// a leader started later than the record, and an earlier process cannot belong to it.
func groupMembers(pgid int, start uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state == "Z" || st.pgrp != pgid || st.start < start {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// procStat is what EndStrays reads of /proc/<pid>/stat.
type procStat struct {
	state string
	pgrp  int
	start uint64 // clock ticks after boot
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold spaces or parentheses itself:
	// the fields start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state), f[2] field 5 (pgrp), f[19] field 22 (starttime).
	if len(f) < 20 {
		return procStat{}, errors.New("short stat")
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, err
	}
	return procStat{state: f[0], pgrp: pgrp, start: start}, nil
}

func startTime(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// bootID identifies this boot of this machine, so a record from before a reboot (or
// from another host sharing the data directory) is never taken for a live process.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}
