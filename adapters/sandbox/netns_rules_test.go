package sandbox

import (
	"net"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// The rules a "full" sandbox's script adds: exceptions before refusals, each family in
// its own batch, a duplicate once, and nothing that is not an address reaching the
// script.
func TestNetRulesAreCanonicalAndSplitByFamily(t *testing.T) {
	c := netConfig{
		Allow: []egressRule{{Net: "203.0.113.0/24"}, {Net: "2001:db8::1/128", Port: 443}},
		Refuse: []string{"10.0.0.0/8", "fc00::/7", "10.0.0.0/8", "192.0.2.7/32",
			"1.2.3.4/32\nlink set lo down", "$(touch /tmp/x)"},
	}
	v4, v6 := netRules(c)
	wantV4 := "rule add to 203.0.113.0/24 pref 1000 lookup main\n" +
		"rule add to 169.254.0.53/32 pref 1000 lookup main ipproto udp dport 53\n" +
		"rule add to 169.254.0.53/32 pref 1000 lookup main ipproto tcp dport 53\n" +
		"rule add to 10.0.0.0/8 pref 2000 prohibit\n" +
		"rule add to 192.0.2.7/32 pref 2000 prohibit\n"
	if v4 != wantV4 {
		t.Errorf("expected the IPv4 rules\n%s\ngot\n%s", wantV4, v4)
	}
	wantV6 := "rule add to 2001:db8::1/128 pref 1000 lookup main ipproto tcp dport 443\n" +
		"rule add to fc00::/7 pref 2000 prohibit\n"
	if v6 != wantV6 {
		t.Errorf("expected the IPv6 rules\n%s\ngot\n%s", wantV6, v6)
	}
	script := enterScript(c)
	for _, bad := range []string{"touch", "lo down"} {
		if strings.Contains(script, bad) {
			t.Errorf("expected %q kept out of the script:\n%s", bad, script)
		}
	}
}

// On a host whose own network is public (a LAN with public addresses, a cloud subnet),
// its gateway and neighbours are not the internet: every network the host is
// connected to directly is refused, IPv4 and IPv6, whether it came with an address or
// as a route alone. What the host reaches through a gateway is not.
func TestNetRulesRefuseEveryOnLinkNetworkOfTheHost(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a network namespace for the test's host needs root")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	machine, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer machine.Close()
	host, err := netns.New() // this thread is in it until Set(machine)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	defer func() {
		if err := netns.Set(machine); err != nil {
			panic(err) // a thread left in the test's namespace would confuse everything after
		}
	}()
	check(t, netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "lan0"}, PeerName: "lan1"}))
	lan := must(netlink.LinkByName("lan0"))
	for _, a := range []string{"198.51.100.2/24", "2001:db8:1::2/64"} {
		check(t, addAddr(netlink.AddrAdd, lan, a))
	}
	check(t, netlink.LinkSetUp(lan))
	check(t, netlink.LinkSetUp(must(netlink.LinkByName("lan1"))))
	idx := lan.Attrs().Index
	for _, r := range []netlink.Route{
		// On-link without an address of the host's in it.
		{LinkIndex: idx, Dst: mustCIDR("192.0.2.128/25"), Scope: netlink.SCOPE_LINK},
		{LinkIndex: idx, Dst: mustCIDR("2001:db8:2::/64")},
		// Through the gateway: the internet as far as the sandbox is concerned.
		{LinkIndex: idx, Dst: mustCIDR("203.0.113.0/24"), Gw: net.ParseIP("198.51.100.1")},
		{LinkIndex: idx, Gw: net.ParseIP("198.51.100.1")},
		{LinkIndex: idx, Gw: net.ParseIP("2001:db8:1::1")},
	} {
		check(t, netlink.RouteAdd(&r))
	}
	c, err := netConfig{}.onHost()
	if err != nil {
		t.Fatal(err)
	}
	v4, v6 := netRules(c)
	for _, n := range []string{"198.51.100.0/24", "192.0.2.128/25", "198.51.100.2/32"} {
		if !strings.Contains(v4, "rule add to "+n+" pref 2000 prohibit\n") {
			t.Errorf("expected %s refused, got the IPv4 rules\n%s", n, v4)
		}
	}
	for _, n := range []string{"2001:db8:1::/64", "2001:db8:2::/64", "2001:db8:1::2/128"} {
		if !strings.Contains(v6, "rule add to "+n+" pref 2000 prohibit\n") {
			t.Errorf("expected %s refused, got the IPv6 rules\n%s", n, v6)
		}
	}
	for _, n := range []string{"203.0.113.0/24", "0.0.0.0/0", "::/0"} {
		if strings.Contains(v4+v6, "rule add to "+n+" ") {
			t.Errorf("expected %s (through the gateway) not refused, got the rules\n%s%s", n, v4, v6)
		}
	}
	if !c.Route {
		t.Errorf("expected the host's default route seen")
	}
}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}
