package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/dnstest"
)

// inTestNetns marks the copy of the test binary that runs inside the network
// namespace the test made: the "host" of the sandboxes under test.
const inTestNetns = "WSHUB_TEST_IN_NETNS"

// The network of the test's own "host" (a network namespace it makes, so nothing is
// sent beyond it): a veth pair to a second namespace holding the "internet" (servers on
// documentation addresses, IPv4 and IPv6, and a name server), and on the host listeners
// on 127.0.0.1, a private address of each family, the metadata address, and another
// public address of the host's own.
const (
	hostVeth    = "198.51.100.2/24"
	gatewayVeth = "198.51.100.1/24"
	publicAddr  = "203.0.113.80"
	privateAddr = "10.77.0.1"
	metadata    = "169.254.169.254"
	// ownAddr is an address of the host's that is neither private nor the one pasta
	// copies into the sandbox: only the rule for the host's own addresses refuses it.
	ownAddr = "192.0.2.77"
	// nameServer is the host's name server (its resolv.conf, in the test's own mount
	// namespace), in the "internet": it says every name is publicAddr.
	nameServer = "203.0.113.53"
	// publicName is a name the agent connects to, resolved through nameServer.
	publicName = "mirror.example"

	// Private and link-local addresses out on the network, not the host's: only the
	// refused ranges keep the agent from them.
	neighbourPrivate   = "10.88.0.1"
	neighbourPrivate6  = "fd88::1"
	neighbourLinkLocal = "169.254.10.10"

	hostVeth6    = "2001:db8:1::2/64"
	gatewayVeth6 = "2001:db8:1::1/64"
	publicAddr6  = "2001:db8:80::80"
	privateAddr6 = "fd77::1"
)

func TestSandboxNetworkFullReachesTheInternetButNotTheHost(t *testing.T) {
	if os.Getenv(inTestNetns) == "" {
		reexecInNewNetns(t)
		return
	}
	servers := testNetwork(t)
	checks := map[string]string{
		"public":               reach(servers["public"]),
		"host_loopback":        reach(servers["loopback"]),
		"host_private":         reach(servers["private"]),
		"metadata":             reach(servers["metadata"]),
		"host_own_addr":        reach(servers["own"]),
		"allowed":              reach(servers["allowed"]),
		"public_v6":            reach(servers["public6"]),
		"host_private_v6":      reach(servers["private6"]),
		"neighbour_private":    reach(servers["neighbour_private"]),
		"neighbour_private_v6": reach(servers["neighbour_private6"]),
		"neighbour_link_local": reach(servers["neighbour_link_local"]),
		// The host's gateway, on its own network (public addresses, both families): the
		// host's neighbourhood, not the internet.
		"on_link_gateway":    reach(net.JoinHostPort(strings.Split(gatewayVeth, "/")[0], servers["gateway_port"])),
		"on_link_gateway_v6": reach(net.JoinHostPort(strings.Split(gatewayVeth6, "/")[0], servers["gateway_port"])),
		// Through the sandbox's name server, which pasta forwards to the host's.
		"by_name": reach(net.JoinHostPort(publicName, servers["public_port"])),
		// The agent cannot undo the rules or route around them.
		"delete_rule": fmt.Sprintf("ip rule del priority %d", refusePriority),
		"add_route":   "ip route add " + privateAddr + "/32 via " + strings.Split(gatewayVeth, "/")[0],
	}
	if _, err := exec.LookPath("perl"); err == nil {
		// The sandbox's own loopback stays the agent's (its test servers), whatever the
		// network: a listener and a client of it inside the sandbox.
		checks["own_loopback"] = "perl -MIO::Socket::INET -e " + shQuote(`my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1:0") or exit 1;
if (fork() == 0) { my $c = $s->accept; print $c "hello\n"; exit 0 }
my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:" . $s->sockport) or exit 1;
exit(<$c> eq "hello\n" ? 0 : 1);`)
	}
	for name, cmd := range checks {
		checks[name] = "timeout 10 bash -c " + shQuote(cmd)
	}
	all := func(v string) map[string]string {
		m := map[string]string{}
		for name := range checks {
			m[name] = v
		}
		return m
	}
	full := all("no")
	full["public"], full["public_v6"], full["allowed"], full["by_name"], full["own_loopback"] = "yes", "yes", "yes", "yes", "yes"
	none := all("no")
	none["own_loopback"] = "yes"
	host := all("yes")
	host["delete_rule"], host["add_route"] = "no", "no"
	for _, tt := range []struct {
		network string
		want    map[string]string
	}{
		{core.NetworkFull, full},
		{core.NetworkNone, none},
		{core.NetworkHost, host},
	} {
		t.Run(tt.network, func(t *testing.T) {
			l := newHostLayout(t)
			r := newAgentHost(t, Options{StateDir: l.data + "/run",
				Sandbox: Config{Mode: ModeBwrap, Hidden: []string{l.data}, EgressAllow: []string{servers["allowed"]}}},
				script(t, "cat >/dev/null\n"+probeLines(checks)))
			got := results(t, r.RunTurn(context.Background(), l.turn(tt.network, "probe")))
			for _, name := range slices.Sorted(maps.Keys(checks)) {
				if got[name] != tt.want[name] {
					t.Errorf("network %s, %s: expected %s, got %q", tt.network, name, tt.want[name], got[name])
				}
			}
		})
	}
}

// On a host with no route out (offline, or a build sandbox), the hub still starts and
// "full" turns run: there is nothing for pasta to connect, so the sandbox has only its
// own loopback.
func TestSandboxNetworkFullOnAHostWithoutARouteOut(t *testing.T) {
	if os.Getenv(inTestNetns) == "" {
		reexecInNewNetns(t)
		return
	}
	check(t, netlink.LinkSetUp(must(netlink.LinkByName("lo"))))
	l := newHostLayout(t)
	r := sandboxed(t, l, script(t, "cat >/dev/null; echo ok"))
	if res := r.RunTurn(context.Background(), l.turn(core.NetworkFull, "hi")); res.Reply != "ok" {
		t.Fatalf("expected the full-network turn to run on a host without a route out, got %+v", res)
	}
}

// reexecInNewNetns runs the calling test again in a copy of the test binary inside new
// network and mount namespaces (the mount namespace keeps the second network namespace
// private), and fails with its output if it fails.
func reexecInNewNetns(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("making network namespaces for the test's host and internet needs root")
	}
	if _, err := exec.LookPath("pasta"); err != nil {
		t.Skip("pasta is not installed (Debian: apt-get install passt; make test installs it)")
	}
	reexecUnshared(t, "--net", "--mount")
}

// reexecUnshared runs the calling test again in a copy of the test binary inside the
// new namespaces unshare's flags name, and fails with its output if it fails.
func reexecUnshared(t *testing.T, flags ...string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("making namespaces for the test needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", append(flags, "--", self, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")...)
	cmd.Env = append(os.Environ(), inTestNetns+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test in its own namespaces failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("expected the test to run and pass in its own namespaces, got:\n%s", out)
	}
}

// testNetwork builds the test's network in this (new, empty) network namespace, starts
// a server on each address, and returns their addresses: public, loopback, private,
// metadata, own, and allowed (a second port on the private address, the one the
// sandbox's WSHUB_AGENT_EGRESS_ALLOW opens).
func testNetwork(t *testing.T) map[string]string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	host, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	internet, err := netns.New() // and this thread is in it until Set(host)
	if err != nil {
		t.Fatal(err)
	}
	defer internet.Close()
	servers := map[string]string{}
	func() {
		defer func() {
			if err := netns.Set(host); err != nil {
				panic(err) // a thread left in the wrong namespace would confuse everything after
			}
		}()
		lo := must(netlink.LinkByName("lo"))
		check(t, netlink.LinkSetUp(lo))
		for _, a := range []string{publicAddr + "/32", nameServer + "/32", publicAddr6 + "/128",
			neighbourPrivate + "/32", neighbourPrivate6 + "/128", neighbourLinkLocal + "/32"} {
			check(t, addAddr(netlink.AddrAdd, lo, a))
		}
		servers["public"], servers["public6"] = serve(t, publicAddr), serve(t, publicAddr6)
		servers["neighbour_private"], servers["neighbour_private6"] = serve(t, neighbourPrivate), serve(t, neighbourPrivate6)
		servers["neighbour_link_local"] = serve(t, neighbourLinkLocal)
		// Every address of the internet's, both families: the gateway's among them, once
		// the link is made.
		_, servers["gateway_port"], _ = net.SplitHostPort(serve(t, "::"))
		dnstest.Serve(t, must(net.ListenPacket("udp", net.JoinHostPort(nameServer, "53"))), net.ParseIP(publicAddr))
	}()
	_, servers["public_port"], _ = net.SplitHostPort(servers["public"])
	// The host's resolv.conf, in this test's own mount namespace (made private first, so
	// nothing of it reaches the machine's).
	check(t, syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""))
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	write(t, resolv, "nameserver "+nameServer+"\n")
	check(t, syscall.Mount(resolv, "/etc/resolv.conf", "", syscall.MS_BIND, ""))

	check(t, netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "veth-host"}, PeerName: "veth-inet",
		PeerNamespace: netlink.NsFd(internet)}))
	inet, err := netlink.NewHandleAt(internet)
	if err != nil {
		t.Fatal(err)
	}
	defer inet.Close()
	peer := must(inet.LinkByName("veth-inet"))
	for _, a := range []string{gatewayVeth, gatewayVeth6} {
		check(t, addAddr(inet.AddrAdd, peer, a))
	}
	check(t, inet.LinkSetUp(peer))

	lo := must(netlink.LinkByName("lo"))
	check(t, netlink.LinkSetUp(lo))
	veth := must(netlink.LinkByName("veth-host"))
	for _, a := range []string{hostVeth, hostVeth6} {
		check(t, addAddr(netlink.AddrAdd, veth, a))
	}
	check(t, netlink.LinkSetUp(veth))
	for _, gw := range []string{gatewayVeth, gatewayVeth6} {
		check(t, netlink.RouteAdd(&netlink.Route{LinkIndex: veth.Attrs().Index, Gw: net.ParseIP(strings.Split(gw, "/")[0])}))
	}
	// On the loopback interface: kernels without the dummy module are common in
	// containers, and an address is the host's whatever interface holds it.
	for _, a := range []string{privateAddr + "/32", metadata + "/32", ownAddr + "/32", privateAddr6 + "/128"} {
		check(t, addAddr(netlink.AddrAdd, lo, a))
	}
	servers["loopback"] = serve(t, "127.0.0.1")
	servers["private"] = serve(t, privateAddr)
	servers["allowed"] = serve(t, privateAddr)
	servers["metadata"] = serve(t, metadata)
	servers["own"] = serve(t, ownAddr)
	servers["private6"] = serve(t, privateAddr6)
	return servers
}

// addAddr adds the address cidr to link with add (netlink's, or a handle's in another
// namespace), usable at once: no IPv6 duplicate address detection to wait for.
func addAddr(add func(netlink.Link, *netlink.Addr) error, link netlink.Link, cidr string) error {
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		return err
	}
	a.Flags = unix.IFA_F_NODAD
	return add(link, a)
}

// reach is a check that connects to the server at host:port s (serve's) and reads its
// greeting.
func reach(s string) string {
	host, port, _ := net.SplitHostPort(s)
	return fmt.Sprintf(`exec 3<>/dev/tcp/%s/%s && read -r -t 5 line <&3 && test "$line" = hello`, host, port)
}

// serve listens on addr (a free port) in the calling thread's network namespace and
// greets every connection; it returns host:port.
func serve(t *testing.T, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// must is v, or a panic (the test fails with it) when there is an error: for values
// the test network cannot be built without.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("test network: %v", err))
	}
	return v
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestEgressAllowEntries(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]net.IP, error) {
		switch host {
		case "mirror.internal":
			return []net.IP{net.ParseIP("10.1.2.3"), net.ParseIP("fd00::3")}, nil
		case "gateway.local":
			return []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, nil
		}
		return nil, errors.New("no such host")
	}
	for _, tt := range []struct {
		entry string
		want  []egressRule
		err   string
	}{
		{entry: "10.1.0.0/16", want: []egressRule{{Net: "10.1.0.0/16"}}},
		{entry: "10.1.2.3", want: []egressRule{{Net: "10.1.2.3/32"}}},
		{entry: "fd00::5", want: []egressRule{{Net: "fd00::5/128"}}},
		{entry: "10.1.2.3:8080", want: []egressRule{{Net: "10.1.2.3/32", Port: 8080}}},
		{entry: "[fd00::5]:443", want: []egressRule{{Net: "fd00::5/128", Port: 443}}},
		{entry: "mirror.internal:3142", want: []egressRule{{Net: "10.1.2.3/32", Port: 3142}, {Net: "fd00::3/128", Port: 3142}}},
		// A gateway on the hub's host: one port of its loopback, by address or name.
		{entry: "127.0.0.1:4000", want: []egressRule{{Net: "127.0.0.1/32", Port: 4000}}},
		{entry: "[::1]:4000", want: []egressRule{{Net: "::1/128", Port: 4000}}},
		{entry: "gateway.local:4000", want: []egressRule{{Net: "127.0.0.1/32", Port: 4000}, {Net: "::1/128", Port: 4000}}},
		{entry: "127.0.0.1", err: "open one port of it with host:port"},
		{entry: "127.0.0.0/8", err: "open one port of it with host:port"},
		{entry: "::1", err: "open one port of it with host:port"},
		{entry: "127.0.0.2:4000", err: "only 127.0.0.1 and ::1"},
		{entry: " ", want: nil},
		{entry: "mirror.internal", err: "not a CIDR"},
		{entry: "10.1.2.3:0", err: "port must be"},
		{entry: "10.1.2.3:http", err: "port must be"},
		{entry: "nowhere.internal:80", err: "no such host"},
	} {
		got, err := parseEgressAllow(context.Background(), []string{tt.entry}, lookup)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: expected an error saying %q, got %v, %v", tt.entry, tt.err, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: expected %v, got %v, %v", tt.entry, tt.want, got, err)
		}
	}
}
