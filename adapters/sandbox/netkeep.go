//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wshub/wshub/internal/procgroup"
)

// A workspace's user and network namespaces, with their pasta, are kept between its
// turns while it is active: making them was most of what a trivial turn cost (pasta's
// start alone is some 20 ms; then the namespaces' making and tearing down, the rules,
// three more process starts). A holder process makes the pair as a one-off turn's
// script does (the same clone flags, the policy rules added once: holdScript) and
// waits; pasta is attached to it once. Each turn then enters the holder's namespaces
// with nsenter (Go's exec cannot setns, and the hub runs no code of a checkout), joins
// its cgroup first and execs bubblewrap, as a one-off turn's script does. The turn's
// cgroup is emptied at its end, so no process of the agent, and so no socket or
// listener of it, is left in the namespace for the next turn. (A "none" sandbox's
// namespace is bubblewrap's own, as before: keeping one measured no faster, the
// nsenter start costing what the namespace's making saved, and it would hold a place.)
//
// A kept pair is one workspace's, for one policy (the rules, which follow the host's
// addresses and the allow list, and pasta's forwarded ports): a change of either ends
// it and makes another. What is kept is bounded by a count and a memory
// budget, each pair counted as its pasta's buffers; past either, the least recently
// used pair that no turn is in is ended first (and waited for), and when every pair is
// in use the turn runs the one-off way. A burst across more workspaces than are kept
// so costs what a turn cost before, never more memory. A pair no turn used for the
// idle time is ended: the workspace went idle, or stopped.

// What a host keeps by default (Config.KeptNetworks, KeptNetworkBytes, KeepIdle).
const (
	DefaultKeptNetworks     = 32
	DefaultKeptNetworkBytes = 1 << 30
	DefaultKeepIdle         = 2 * time.Minute
)

// pastaBytes is what a kept pair is counted as against the budget: pasta's buffers
// (measured: 31 MB resident, 29 MB of it its own; the holder, cat, 0.1 MB).
const pastaBytes = 32 << 20

// holderName is the argv[0] of a kept pair's holder, as ps shows it.
const holderName = "wshub-sandbox-netkeep"

// netKeeper keeps workspaces' namespace pairs.
type netKeeper struct {
	max   int
	bytes int64
	idle  time.Duration
	// nsenter enters a holder's namespaces.
	nsenter string

	mu     sync.Mutex
	kept   map[string]*keptNet // by workspace
	used   int64
	closed bool
}

// keptNet is one workspace's kept pair.
type keptNet struct {
	ws, policy string
	cost       int64
	nsenter    string
	holder     *exec.Cmd
	pid        int
	hold       *os.File      // the holder's standard input: closing it ends the holder
	pasta      *sandboxPasta // nil without a route out
	ended      chan struct{} // closed when the holder has ended (its standard output closed)
	endOnce    sync.Once
	// inUse, gen and last are the keeper's, under its lock: a turn runs in the pair, how
	// many turns it was given to (an idle timer set before the last is stale), and when
	// the last ended.
	inUse bool
	gen   int
	last  time.Time
}

func newNetKeeper(cfg Config, nsenter string) *netKeeper {
	max := cfg.KeptNetworks
	if max == 0 {
		max = DefaultKeptNetworks
	}
	bytes := cfg.KeptNetworkBytes
	if bytes <= 0 {
		bytes = DefaultKeptNetworkBytes
	}
	idle := cfg.KeepIdle
	if idle <= 0 {
		idle = DefaultKeepIdle
	}
	return &netKeeper{max: max, bytes: bytes, idle: idle, nsenter: nsenter, kept: map[string]*keptNet{}}
}

// keep gives inv the workspace's kept pair when it can, and what to call when the
// turn has ended; inv unchanged (the one-off way) when it cannot.
func (h *Host) keep(workspaceID string, inv Process) (Process, func()) {
	k := h.keeper
	if k == nil || inv.netns == nil {
		return inv, func() {}
	}
	c, err := inv.netns.onHost()
	if err != nil {
		return inv, func() {} // the one-off way says why
	}
	n := k.acquire(workspaceID, c.policy(), func() (*keptNet, error) { return startHolder(c) })
	if n == nil {
		return inv, func() {}
	}
	inv.netns, inv.kept = nil, n
	return inv, func() { k.release(n) }
}

// policy is what a "full" pair is made for: its rules and pasta's.
func (c netConfig) policy() string {
	v4, v6 := netRules(c)
	return fmt.Sprint(c.Pasta, c.Route, loopbackPorts(c.Allow), v4, v6)
}

// acquire returns the workspace's pair of policy, made by start when there is none,
// marked in use; nil when the turn is to run the one-off way: the workspace's pair is
// in use (its setup beside a turn), every pair kept is in use, or start failed (the
// one-off way then says why, or works).
func (k *netKeeper) acquire(ws, policy string, start func() (*keptNet, error)) *keptNet {
	const cost = pastaBytes
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	var ending []*keptNet
	if n := k.kept[ws]; n != nil {
		if n.inUse {
			k.mu.Unlock()
			return nil
		}
		if n.policy == policy && n.alive() {
			n.inUse = true
			n.gen++
			k.mu.Unlock()
			return n
		}
		ending = append(ending, k.forget(n))
	}
	for len(k.kept) >= k.max || k.used+cost > k.bytes {
		victim := k.leastRecent()
		if victim == nil {
			k.mu.Unlock()
			endAll(ending)
			return nil
		}
		ending = append(ending, k.forget(victim))
	}
	// The place is taken before the pair is made, outside the lock: the bound holds
	// while it is being made.
	n := &keptNet{ws: ws, policy: policy, cost: cost, nsenter: k.nsenter, inUse: true, gen: 1}
	k.kept[ws] = n
	k.used += cost
	k.mu.Unlock()
	// What was ended is gone before another is made: memory is never over the budget.
	endAll(ending)
	made, err := start()
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil || k.closed {
		if k.kept[ws] == n {
			k.forget(n)
		}
		if made != nil {
			go made.end()
		}
		return nil
	}
	if k.kept[ws] != n { // not possible: only close forgets, and it leaves pairs being made
		go made.end()
		return nil
	}
	made.ws, made.policy, made.cost, made.nsenter, made.inUse, made.gen = ws, policy, cost, k.nsenter, true, 1
	k.kept[ws] = made
	return made
}

// release marks n free once its turn has ended; it ends once idle for k.idle.
func (k *netKeeper) release(n *keptNet) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n.inUse, n.last = false, time.Now()
	if k.kept[n.ws] != n {
		go n.end()
		return
	}
	gen := n.gen
	time.AfterFunc(k.idle, func() {
		k.mu.Lock()
		expired := k.kept[n.ws] == n && !n.inUse && n.gen == gen
		if expired {
			k.forget(n)
		}
		k.mu.Unlock()
		if expired {
			n.end()
		}
	})
}

// forget drops n from what is kept (k.mu held) and returns it, to be ended.
func (k *netKeeper) forget(n *keptNet) *keptNet {
	delete(k.kept, n.ws)
	k.used -= n.cost
	return n
}

// leastRecent is the pair used least recently that no turn is in (k.mu held).
func (k *netKeeper) leastRecent() *keptNet {
	var oldest *keptNet
	for _, n := range k.kept {
		if !n.inUse && (oldest == nil || n.last.Before(oldest.last)) {
			oldest = n
		}
	}
	return oldest
}

// close ends every pair kept, and keeps none from then on.
func (k *netKeeper) close() {
	k.mu.Lock()
	k.closed = true
	var all []*keptNet
	for _, n := range k.kept {
		if n.holder != nil { // one still being made is ended by acquire
			all = append(all, k.forget(n))
		}
	}
	k.mu.Unlock()
	endAll(all)
}

// count is how many pairs are kept and what they are counted as.
func (k *netKeeper) count() (int, int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.kept), k.used
}

func endAll(ns []*keptNet) {
	for _, n := range ns {
		n.end()
	}
}

// startHolder makes a pair: the holder in new namespaces, pasta attached to it (with
// a route out), and returns once the holder has set the network up.
func startHolder(c netConfig) (*keptNet, error) {
	ready, remove, err := c.readyFIFO()
	if err != nil {
		return nil, err
	}
	defer remove()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("the sandbox's network: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("the sandbox's network: %w", err)
	}
	errs := &tailBuffer{max: 4 << 10}
	cmd := exec.Command("/bin/sh", append([]string{"-c", holdScript(c), holderName, ready}, c.Tools...)...)
	cmd.Args[0] = holderName
	cmd.Dir, cmd.Env = "/", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errs
	cmd.SysProcAttr = namespacesAttr()
	err = cmd.Start()
	closeAll(inR, outW)
	if err != nil {
		closeAll(inW, outR)
		return nil, fmt.Errorf("the sandbox's network: %w", err)
	}
	n := &keptNet{holder: cmd, pid: cmd.Process.Pid, hold: inW, ended: make(chan struct{})}
	said := make(chan bool, 1)
	go func() {
		r := bufio.NewReader(outR)
		line, _ := r.ReadString('\n')
		said <- line == "ready\n"
		_, _ = io.Copy(io.Discard, r)
		_ = outR.Close()
		close(n.ended)
	}()
	if ready != "-" {
		if n.pasta, err = startPasta(c, n.pid, ready); err != nil {
			n.end()
			return nil, err
		}
	}
	select {
	case ok := <-said:
		if ok {
			return n, nil
		}
		n.end()
		return nil, errors.New(strings.TrimSpace(errs.String()))
	case <-n.pasta.endedEarly():
		n.end()
		return nil, errors.New(n.pasta.failure())
	}
}

// servedBy is n's pasta; nil without n.
func (n *keptNet) servedBy() *sandboxPasta {
	if n == nil {
		return nil
	}
	return n.pasta
}

// alive reports whether the holder and its pasta still run.
func (n *keptNet) alive() bool {
	select {
	case <-n.ended:
		return false
	case <-n.pasta.endedEarly():
		return false
	default:
		return true
	}
}

// enter is the command line that runs path with args in n's namespaces. nsenter keeps
// the hub's credentials (its uid is root there, with every capability over the pair,
// as the one-off script's is) and execs path: it forks nothing.
func (n *keptNet) enter(path string, args []string) (string, []string) {
	return n.nsenter, append([]string{"--user", "--net", "--preserve-credentials", "--target", strconv.Itoa(n.pid), "--", path}, args...)
}

// end ends the holder and pasta and waits until both are gone: their memory is free
// when it returns. Once: a pair the host's Close ended under a turn is ended again when
// the turn lets it go.
func (n *keptNet) end() {
	n.endOnce.Do(func() {
		n.pasta.stop()
		_ = n.hold.Close()
		_ = procgroup.Signal(n.pid, syscall.SIGKILL)
		_ = n.holder.Wait()
		if n.pasta != nil {
			<-n.pasta.ended
		}
	})
}
