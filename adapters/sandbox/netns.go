//go:build linux

package sandbox

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A sandbox with the project network "full" runs in a user and network namespace of its
// own. The hub starts the turn's first process in them (clone flags, mapping the hub's
// uid to root) and attaches pasta to them itself. That process is /bin/sh running a
// fixed script (netns_rules.go), root in the new namespaces:
//
//  1. it joins the turn's cgroup (limits.go) before anything else, so every process
//     of the sandbox is born in it;
//  2. it waits for pasta to have configured the interface (pasta writes its pid to a
//     FIFO of the hub's once it has), adds the policy rules (egress.go) with iproute2's
//     `ip -batch`, and execs bubblewrap;
//  3. bubblewrap makes the agent's user namespace inside that one: the agent has no
//     capability over the network namespace, so it cannot change the rules.
//
// The hub ends pasta when the sandbox's first process has ended, and ends the sandbox
// when pasta ends first. pasta is the hub's child, outside the turn's cgroup: about
// 30 MB of its own buffers that are the hub's to pay for, not the agent's memory.
// (These steps used to be the hub's own executable re-run as helpers, twice per turn:
// each start of it costs 20 ms or so of CPU, most of a trivial turn's.)
//
// pasta attaches to a namespace the hub made rather than making its own (pasta COMMAND):
// Debian bookworm's pasta, run as root, drops to nobody and then cannot map users into
// the namespace it makes, so a hub running as root would get no sandbox at all.

// netStepName is the argv[0] of the script's shell, as ps shows it.
const netStepName = "wshub-sandbox-net"

// onHost is c with what the host is like now: the addresses and networks to refuse,
// and the routes to wait for.
func (c netConfig) onHost() (netConfig, error) {
	own, err := hostAddresses()
	if err != nil {
		return c, err
	}
	onLink, err := hostOnLink()
	if err != nil {
		return c, err
	}
	c.Refuse = append(append(append([]string(nil), refusedNets...), own...), onLink...)
	c.Route = hasDefaultRoute(netlink.FAMILY_V4) || hasDefaultRoute(netlink.FAMILY_V6)
	return c, nil
}

// enterCommand is the command line of the script that runs command (bubblewrap's) in
// the namespaces, given the FIFO pasta says it is ready on ("-": no pasta), and the
// attributes that make the namespaces.
func enterCommand(c netConfig, ready string, command []string) (path, argv0 string, args []string, sys *syscall.SysProcAttr) {
	args = append(append([]string{"-c", enterScript(c), netStepName, ready}, c.Tools...), c.Procs...)
	return "/bin/sh", netStepName, append(append(args, "--"), command...), namespacesAttr()
}

// namespacesAttr start a process in a new user and network namespace, the hub's uid
// and gid mapped to root there, in a process group of its own.
func namespacesAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		// The sandbox dies with the hub, as bwrap's --die-with-parent has it once the
		// script has exec'd bubblewrap; this covers the script itself (and a kept
		// namespace's holder).
		Pdeathsig: syscall.SIGKILL,
		Setpgid:   true,
	}
}

// readyFIFO makes the FIFO pasta writes its pid to once ready, in c.Dir, and returns
// its path and what removes it; "-" when no pasta will run (no route out).
func (c netConfig) readyFIFO() (string, func(), error) {
	if !c.Route {
		return "-", func() {}, nil
	}
	path := filepath.Join(c.Dir, "pasta-"+rand.Text()+".ready")
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return "", nil, fmt.Errorf("the sandbox's network: %w", err)
	}
	return path, func() { _ = os.Remove(path) }, nil
}

// sandboxPasta is the pasta serving one turn's namespaces.
type sandboxPasta struct {
	cmd    *exec.Cmd
	errs   *tailBuffer
	ended  chan struct{} // closed when pasta has ended
	waited error
}

// startPasta attaches pasta to the namespaces of pid; it writes its pid to ready once it
// has configured them.
func startPasta(c netConfig, pid int, ready string) (*sandboxPasta, error) {
	p := &sandboxPasta{errs: &tailBuffer{max: 4 << 10}, ended: make(chan struct{})}
	p.cmd = exec.Command(c.Pasta, append([]string{"--pid", ready}, pastaArgs(pid, loopbackPorts(c.Allow))...)...)
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
// forwarded into the namespace (-t, -u: none), and the gateway's address is not mapped
// to the host (--no-map-gw): the sandbox reaches the host only as the rest of the
// network does. Of the host's loopback, only the ports WSHUB_AGENT_EGRESS_ALLOW opens
// (loopback) are forwarded, TCP, from the same port of the sandbox's 127.0.0.1 and ::1
// (-T; this pasta cannot bind one address of the two); none otherwise (-T, -U: none).
// pasta runs as the hub's user, the owner of the namespace it joins (as root it would
// otherwise drop to nobody, who may not join it); it keeps no capability either way.
func pastaArgs(pid int, loopback []uint16) []string {
	forward := "none"
	if len(loopback) > 0 {
		ports := make([]string, len(loopback))
		for i, p := range loopback {
			ports[i] = strconv.Itoa(int(p))
		}
		forward = strings.Join(ports, ",")
	}
	return []string{"--foreground", "--quiet", "--stderr", "--runas", fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		"--config-net", "--no-map-gw", "-t", "none", "-u", "none", "-T", forward, "-U", "none",
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

// hostOnLink are the networks the host is connected to directly, IPv4 and IPv6: the
// destinations of its main table's unicast routes that have no gateway (the prefix of
// each of its addresses, and any route to a link). Their gateway and neighbours are the
// host's neighbourhood, not the internet, even when the addresses are public; and
// pasta, which would connect to them from the host, copies them into the sandbox as
// connected routes. A default route without a gateway (a point-to-point link) is the
// way out, not a neighbourhood, and is left out.
func hostOnLink() ([]string, error) {
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, fmt.Errorf("host routes: %w", err)
	}
	var out []string
	for _, r := range routes {
		if r.Type != unix.RTN_UNICAST || r.Gw != nil || r.Via != nil || len(r.MultiPath) > 0 || r.Dst == nil {
			continue
		}
		if ones, _ := r.Dst.Mask.Size(); ones == 0 {
			continue
		}
		out = append(out, r.Dst.String())
	}
	return out, nil
}
