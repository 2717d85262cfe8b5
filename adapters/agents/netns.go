package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A sandbox with the project network "full" runs in a user and network namespace of its
// own, made in three steps by the hub's own executable re-run as a helper (argv[0]
// netHelper, recognised in this package's init, so the hub, the runtime and test binaries
// all have it; /proc/self/exe, so a binary replaced on disk does not matter):
//
//  1. "supervise", in the host's namespaces: starts step 2 in a new user namespace
//     (mapping the hub's uid to root) and a new network namespace, then pasta attached
//     to that namespace; ends pasta when the sandbox ends, and exits as it did. With a
//     turn's cgroup, the cgroup helper runs this step itself once it has joined the
//     group (limits.go), rather than exec'ing the executable once more.
//  2. "enter", root in the new namespaces: adds the policy rules (egress.go), waits for
//     pasta to have configured the interface, and execs bubblewrap.
//  3. bubblewrap makes the agent's user namespace inside that one: the agent has no
//     capability over the network namespace, so it cannot change the rules.
//
// pasta attaches to a namespace the hub made rather than making its own (pasta COMMAND):
// Debian bookworm's pasta, run as root, drops to nobody and then cannot map users into
// the namespace it makes, so a hub running as root would get no sandbox at all.

// netHelper is the argv[0] of the helper steps.
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

// netConfig is what the hub passes to the helper steps (as JSON, in one argument).
type netConfig struct {
	// Parent is the hub's process id: the sandbox dies with it.
	Parent int          `json:"parent"`
	Pasta  string       `json:"pasta"`
	Allow  []egressRule `json:"allow,omitempty"`
	// Fds are the descriptors from 3 on that the agent gets (the event pipe, then
	// Extra).
	Fds int `json:"fds"`
	// Refuse, Wait4 and Wait6 are filled in by "supervise", from the host as it is when
	// the turn starts: its own addresses, and the address families pasta will configure
	// (those the host has a default route of).
	Refuse []string `json:"refuse,omitempty"`
	Wait4  bool     `json:"wait4,omitempty"`
	Wait6  bool     `json:"wait6,omitempty"`
}

// netCommand is the command line that runs command (bubblewrap's) in a "full" sandbox
// network.
func netCommand(cfg netConfig, command []string) (path, argv0 string, args []string) {
	cfg.Parent = os.Getpid()
	b, _ := json.Marshal(cfg) // plain strings, ints and bools
	return selfExe, netHelper, append([]string{"supervise", string(b)}, command...)
}

// netMain runs a helper step and returns its exit status. Failures are told on standard
// error, which the turn reports, with status 125 (an agent error, not a missing agent).
func netMain(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, netHelper+": usage: supervise|enter CONFIG COMMAND...")
		return 125
	}
	var cfg netConfig
	if err := json.Unmarshal([]byte(args[1]), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "%s: config: %v\n", netHelper, err)
		return 125
	}
	var err error
	switch args[0] {
	case "supervise":
		var code int
		if code, err = supervise(cfg, args[2:]); err == nil {
			return code
		}
	case "enter":
		err = enter(cfg, args[2:]) // returns only on failure
	default:
		err = fmt.Errorf("unknown step %q", args[0])
	}
	fmt.Fprintf(os.Stderr, "the sandbox's network could not be set up: %v\n", err)
	return 125
}

// supervise runs "enter" in new user and network namespaces, attaches pasta to them, and
// returns the sandbox's exit status once it ends.
func supervise(cfg netConfig, command []string) (int, error) {
	// Pdeathsig belongs to the thread that started the child: both children die with
	// this process only if it is always the same thread.
	runtime.LockOSThread()
	// The sandbox dies with the hub, as bwrap's --die-with-parent has it when bwrap is the
	// hub's child: this process is in between, so it dies with the hub too, and the
	// sandbox and pasta with it. Checked after the fact: the hub may already be gone.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return 0, fmt.Errorf("parent death signal: %w", err)
	}
	if os.Getppid() != cfg.Parent {
		return 0, errors.New("the hub that started the sandbox is gone")
	}
	// The turn's SIGTERM goes to the whole process group, the sandbox included; this
	// process waits for the sandbox to end rather than going first. Caught, not ignored:
	// an ignored signal would stay ignored in the children.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	own, err := hostAddresses()
	if err != nil {
		return 0, err
	}
	cfg.Refuse = append(append([]string(nil), refusedNets...), own...)
	cfg.Wait4, cfg.Wait6 = hasDefaultRoute(netlink.FAMILY_V4), hasDefaultRoute(netlink.FAMILY_V6)
	b, _ := json.Marshal(cfg)

	inner := exec.Command(selfExe, append([]string{"enter", string(b)}, command...)...)
	inner.Args[0] = netHelper
	inner.Stdin, inner.Stdout, inner.Stderr = os.Stdin, os.Stdout, os.Stderr
	for fd := 3; fd < 3+cfg.Fds; fd++ {
		inner.ExtraFiles = append(inner.ExtraFiles, os.NewFile(uintptr(fd), "fd"+strconv.Itoa(fd)))
	}
	inner.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	if err := inner.Start(); err != nil {
		return 0, fmt.Errorf("new network namespace: %w", err)
	}
	for _, f := range inner.ExtraFiles {
		_ = f.Close() // the sandbox has its copies; the agent must see its pipes close
	}
	innerDone := make(chan error, 1)
	go func() { innerDone <- inner.Wait() }()
	if !cfg.Wait4 && !cfg.Wait6 {
		// The host has no route out (a machine offline): there is nothing for pasta to
		// connect, and the sandbox's own loopback is all "full" can give.
		return exitCode(<-innerDone), nil
	}

	pastaErr := &tailBuffer{max: 4 << 10}
	pasta := exec.Command(cfg.Pasta, pastaArgs(inner.Process.Pid)...)
	pasta.Stderr = pastaErr
	// Not the agent's environment (its credentials, whatever WSHUB_AGENT_ENV names): pasta
	// needs none of it.
	pasta.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	// A process group of its own: the turn's SIGTERM, sent to its group, is for the
	// sandbox; pasta goes once the sandbox has, or with this process.
	pasta.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := pasta.Start(); err != nil {
		_ = inner.Process.Kill()
		<-innerDone
		return 0, fmt.Errorf("pasta: %w", err)
	}
	pastaDone := make(chan error, 1)
	go func() { pastaDone <- pasta.Wait() }()

	select {
	case err := <-innerDone:
		_ = pasta.Process.Kill()
		<-pastaDone
		return exitCode(err), nil
	case err := <-pastaDone:
		_ = inner.Process.Kill()
		<-innerDone
		return 0, fmt.Errorf("pasta ended before the sandbox: %v: %s", err, pastaMessages(pastaErr.String()))
	}
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

// exitCode is the status to exit with for how the sandbox ended: its own code, or
// 128+signal as a shell reports it.
func exitCode(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err != nil {
			return 125
		}
		return 0
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// enter adds the policy rules, waits for the network and execs command; it returns only
// on failure.
func enter(cfg netConfig, command []string) error {
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
