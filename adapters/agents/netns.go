package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A sandbox with the project network "full" runs in a user and network namespace of its
// own. The hub starts the turn's first process in them (clone flags, mapping the hub's
// uid to root) and attaches pasta to them itself; that process is the hub's own
// executable re-run as a helper (argv[0] netHelper, recognised in this package's init,
// so the hub, the runtime and test binaries all have it; /proc/self/exe, so a binary
// replaced on disk does not matter), in one step, "enter", root in the new namespaces:
//
//  1. it joins the turn's cgroup (limits.go) before anything else, so every process
//     of the sandbox is born in it;
//  2. it adds the policy rules (egress.go), waits for pasta to have configured the
//     interface, and execs bubblewrap;
//  3. bubblewrap makes the agent's user namespace inside that one: the agent has no
//     capability over the network namespace, so it cannot change the rules.
//
// The hub ends pasta when the sandbox's first process has ended, and ends the sandbox
// when pasta ends first. pasta is the hub's child, outside the turn's cgroup: about
// 30 MB of its own buffers that are the hub's to pay for, not the agent's memory.
// (The hub used to run a second helper in between, to start both: each start of this
// executable costs a trivial turn 20 ms or so of CPU.)
//
// pasta attaches to a namespace the hub made rather than making its own (pasta COMMAND):
// Debian bookworm's pasta, run as root, drops to nobody and then cannot map users into
// the namespace it makes, so a hub running as root would get no sandbox at all.

// netHelper is the argv[0] of the helper step.
const netHelper = "wshub-sandbox-net"

// selfExe is the running executable, however it was started.
const selfExe = "/proc/self/exe"

// Rule priorities: the exceptions are looked at before the refusals, both after the
// local table (priority 0), so the sandbox's own addresses and loopback stay its own.
const (
	allowPriority  = 1000
	refusePriority = 2000
)

// netStartTimeout bounds the wait for pasta to configure the sandbox's interface.
const netStartTimeout = 20 * time.Second

func init() {
	if filepath.Base(os.Args[0]) == netHelper {
		os.Exit(netMain(os.Args[1:]))
	}
}

// netConfig is what the hub passes to the helper step (as JSON, in one argument).
type netConfig struct {
	Pasta string       `json:"pasta"`
	Allow []egressRule `json:"allow,omitempty"`
	// Procs are the turn's cgroup.procs files, joined first (none when limits are off).
	Procs []string `json:"procs,omitempty"`
	// Refuse, Wait4 and Wait6 are filled in by the hub (onHost), from the host as it
	// is when the turn starts: its own addresses, and the address families pasta will
	// configure (those the host has a default route of).
	Refuse []string `json:"refuse,omitempty"`
	Wait4  bool     `json:"wait4,omitempty"`
	Wait6  bool     `json:"wait6,omitempty"`
}

// onHost is c with what the host is like now: the addresses to refuse and the routes
// to wait for.
func (c netConfig) onHost() (netConfig, error) {
	own, err := hostAddresses()
	if err != nil {
		return c, err
	}
	c.Refuse = append(append([]string(nil), refusedNets...), own...)
	c.Wait4, c.Wait6 = hasDefaultRoute(netlink.FAMILY_V4), hasDefaultRoute(netlink.FAMILY_V6)
	return c, nil
}

// enterCommand is the command line of the helper step that runs command (bubblewrap's)
// in the namespaces, and the attributes that make them.
func enterCommand(c netConfig, command []string) (path, argv0 string, args []string, sys *syscall.SysProcAttr) {
	b, _ := json.Marshal(c) // plain strings, ints and bools
	return selfExe, netHelper, append([]string{"enter", string(b)}, command...), &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		// The sandbox dies with the hub, as bwrap's --die-with-parent has it once the
		// helper has exec'd bubblewrap; this covers the helper's own start.
		Pdeathsig: syscall.SIGKILL,
		Setpgid:   true,
	}
}

// netMain runs the helper step and returns its exit status, only on failure: told on
// standard error, which the turn reports, with status 125 (an agent error, not a
// missing agent).
func netMain(args []string) int {
	if len(args) < 3 || args[0] != "enter" {
		fmt.Fprintln(os.Stderr, netHelper+": usage: enter CONFIG COMMAND...")
		return 125
	}
	var cfg netConfig
	if err := json.Unmarshal([]byte(args[1]), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "%s: config: %v\n", netHelper, err)
		return 125
	}
	err := enter(cfg, args[2:]) // returns only on failure
	fmt.Fprintf(os.Stderr, "the sandbox's network could not be set up: %v\n", err)
	return 125
}

// sandboxPasta is the pasta serving one turn's namespaces.
type sandboxPasta struct {
	cmd    *exec.Cmd
	errs   *tailBuffer
	ended  chan struct{} // closed when pasta has ended
	waited error
}

// startPasta attaches pasta to the namespaces of pid, unless the host has no route out
// (a machine offline: there is nothing for pasta to connect, and the sandbox's own
// loopback is all "full" can give); then it returns nil.
func startPasta(c netConfig, pid int) (*sandboxPasta, error) {
	if !c.Wait4 && !c.Wait6 {
		return nil, nil
	}
	p := &sandboxPasta{errs: &tailBuffer{max: 4 << 10}, ended: make(chan struct{})}
	p.cmd = exec.Command(c.Pasta, pastaArgs(pid)...)
	p.cmd.Stderr = p.errs
	// Not the agent's environment (its credentials, whatever WSHUB_AGENT_ENV names): pasta
	// needs none of it.
	p.cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	// A process group of its own: the turn's SIGTERM, sent to its group, is for the
	// sandbox; pasta goes once the sandbox has, or with the hub.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("pasta: %w", err)
	}
	go func() { p.waited = p.cmd.Wait(); close(p.ended) }()
	return p, nil
}

// endedEarly is closed when pasta has ended; nil (never) without pasta.
func (p *sandboxPasta) endedEarly() <-chan struct{} {
	if p == nil {
		return nil
	}
	return p.ended
}

// stop ends pasta, once the sandbox it served has ended. It does not wait for pasta to
// be gone (startPasta's goroutine reaps it): pasta takes 15 to 40 ms to exit, freeing its
// buffers, and the turn need not wait for that; it is outside the turn's cgroup.
func (p *sandboxPasta) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Kill()
}

// failure is what the turn reports when pasta ended before the sandbox.
func (p *sandboxPasta) failure() string {
	return fmt.Sprintf("the sandbox's network could not be set up: pasta ended before the sandbox: %v: %s", p.waited, pastaMessages(p.errs.String()))
}

// pastaArgs attach pasta to the network namespace of pid, telling its errors on
// standard error (the hub's start-up check and the turn report them). Nothing is
// forwarded into the namespace (-t, -u: none), above all not the host's loopback ports
// (-T, -U: none), and the gateway's address is not mapped to the host (--no-map-gw): the
// sandbox reaches the host only as the rest of the network does. pasta runs as the hub's
// user, the owner of the namespace it joins (as root it would otherwise drop to nobody,
// who may not join it); it keeps no capability either way.
func pastaArgs(pid int) []string {
	return []string{"--foreground", "--quiet", "--stderr", "--runas", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		"--config-net", "--no-map-gw", "-t", "none", "-u", "none", "-T", "none", "-U", "none",
		"--dns-forward", sandboxDNS, strconv.Itoa(pid)}
}

// pastaMessages is what pasta said, without its complaints that there is no syslog to
// say it to (it tries there first).
func pastaMessages(stderr string) string {
	var kept []string
	for line := range strings.Lines(stderr) {
		if line = strings.TrimSpace(line); line != "" && !strings.Contains(line, "to syslog") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "; ")
}

// enter joins the turn's cgroup, adds the policy rules, waits for the network and execs
// command; it returns only on failure.
func enter(cfg netConfig, command []string) error {
	if err := joinCgroup(cfg.Procs); err != nil {
		return err
	}
	lo, err := netlink.LinkByName("lo")
	if err == nil {
		err = netlink.LinkSetUp(lo)
	}
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	// DNS to sandboxDNS is pasta's to forward; everything else to it is refused.
	allow := append(append([]egressRule(nil), cfg.Allow...),
		egressRule{Net: sandboxDNS + "/32", Port: 53, Proto: "udp"}, egressRule{Net: sandboxDNS + "/32", Port: 53})
	for _, a := range allow {
		if err := addRule(a.Net, allowPriority, func(r *netlink.Rule) {
			r.Table = unix.RT_TABLE_MAIN
			if a.Port != 0 {
				r.IPProto = unix.IPPROTO_TCP
				if a.Proto == "udp" {
					r.IPProto = unix.IPPROTO_UDP
				}
				r.Dport = netlink.NewRulePortRange(a.Port, a.Port)
			}
		}); err != nil {
			return err
		}
	}
	for _, n := range cfg.Refuse {
		if err := addRule(n, refusePriority, func(r *netlink.Rule) { r.Type = unix.FR_ACT_PROHIBIT }); err != nil {
			return err
		}
	}
	if err := waitForRoutes(cfg.Wait4, cfg.Wait6); err != nil {
		return err
	}
	path, err := exec.LookPath(command[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, command, os.Environ())
}

// addRule adds a policy rule for the destination cidr, as set says.
func addRule(cidr string, priority int, set func(*netlink.Rule)) error {
	_, dst, err := net.ParseCIDR(cidr)
	if err != nil {
		return err
	}
	r := netlink.NewRule()
	r.Dst, r.Priority = dst, priority
	r.Family = netlink.FAMILY_V6
	if dst.IP.To4() != nil {
		r.Family = netlink.FAMILY_V4
	}
	set(r)
	if err := netlink.RuleAdd(r); err != nil && !errors.Is(err, syscall.EEXIST) {
		return fmt.Errorf("rule for %s: %w", cidr, err)
	}
	return nil
}

// waitForRoutes waits until pasta has given the namespace a default route of each
// family asked for: an agent started earlier would find no network.
func waitForRoutes(v4, v6 bool) error {
	updates, done := make(chan netlink.RouteUpdate, 16), make(chan struct{})
	defer close(done)
	// Subscribed before looking, so a route added in between is not missed.
	if err := netlink.RouteSubscribe(updates, done); err != nil {
		return fmt.Errorf("route updates: %w", err)
	}
	timeout := time.NewTimer(netStartTimeout)
	defer timeout.Stop()
	for (v4 && !hasDefaultRoute(netlink.FAMILY_V4)) || (v6 && !hasDefaultRoute(netlink.FAMILY_V6)) {
		select {
		case <-updates:
		case <-timeout.C:
			return fmt.Errorf("pasta did not configure the network within %s", netStartTimeout)
		}
	}
	return nil
}

// hasDefaultRoute reports whether this network namespace has a default route of family.
func hasDefaultRoute(family int) bool {
	routes, err := netlink.RouteList(nil, family)
	if err != nil {
		return false
	}
	for _, r := range routes {
		if r.Dst == nil {
			return true
		}
		if ones, _ := r.Dst.Mask.Size(); ones == 0 {
			return true
		}
	}
	return false
}

// hostAddresses are the host's own addresses, each as a CIDR of one address. pasta
// gives the sandbox a copy of one of them, which stays the sandbox's own (the local
// table comes first); the others would reach the host itself.
func hostAddresses() ([]string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("host addresses: %w", err)
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			out = append(out, hostNet(n.IP))
		}
	}
	return out, nil
}
