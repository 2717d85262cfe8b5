package sandbox

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// What a sandbox with the project network "full" may reach. The sandbox has a network
// namespace of its own, connected to the host's network by pasta, a user-mode network
// stack that makes the agent's connections with ordinary sockets of the host. pasta
// would connect to any address, so the namespace itself refuses the ones that are the
// hub's host or its neighbourhood rather than the internet: policy routing rules
// ("prohibit") set up before the agent starts, which the agent, without a capability
// over that namespace, cannot change (netns.go).

// refusedNets are refused to every sandbox: loopback, "this network", private
// (RFC 1918, shared address space RFC 6598, unique local fc00::/7) and link-local
// (169.254.0.0/16 holds the cloud metadata service) addresses. IPv4-mapped IPv6
// addresses (::ffff:10.0.0.1) need no rule of their own: Linux routes them as IPv4.
var refusedNets = []string{
	"0.0.0.0/8", "127.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16",
	"::/128", "::1/128", "fc00::/7", "fe80::/10",
}

// sandboxDNS is the name server a "full" sandbox is given (its /etc/resolv.conf): pasta
// forwards DNS sent there to the host's own resolver, which may well be on a loopback
// or private address the sandbox may not reach itself. A link-local address, refused
// on every port but 53.
const sandboxDNS = "169.254.0.53"

// egressRule is a destination opened to "full" sandboxes despite the refused ranges.
type egressRule struct {
	// Net is a CIDR.
	Net string `json:"net"`
	// Port, when set, limits the rule to TCP to that port; 0 opens every port and
	// protocol.
	Port uint16 `json:"port,omitempty"`
	// Proto is "udp" for the DNS rules; "" is TCP when Port is set.
	Proto string `json:"proto,omitempty"`
}

// parseEgressAllow reads WSHUB_AGENT_EGRESS_ALLOW: comma-separated CIDRs (every port
// and protocol), addresses, or host:port (TCP to that port only). Names are resolved
// now, once: the rules hold addresses. The host's loopback is open only as host:port
// of 127.0.0.1 or ::1, the ports pasta can forward to it (loopbackPorts): anything else
// of it would open nothing, silently, so it stops the hub instead.
func parseEgressAllow(ctx context.Context, entries []string, lookup func(context.Context, string) ([]net.IP, error)) ([]egressRule, error) {
	var rules []egressRule
	for _, e := range entries {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if _, n, err := net.ParseCIDR(e); err == nil {
			rules = append(rules, egressRule{Net: n.String()})
			continue
		}
		if ip := net.ParseIP(e); ip != nil {
			rules = append(rules, egressRule{Net: hostNet(ip)})
			continue
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil {
			return nil, fmt.Errorf("WSHUB_AGENT_EGRESS_ALLOW: %q is not a CIDR, an address or host:port", e)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil || p == 0 {
			return nil, fmt.Errorf("WSHUB_AGENT_EGRESS_ALLOW: %q: the port must be 1 to 65535", e)
		}
		ips := []net.IP{net.ParseIP(host)}
		if ips[0] == nil {
			if ips, err = lookup(ctx, host); err != nil {
				return nil, fmt.Errorf("WSHUB_AGENT_EGRESS_ALLOW: %q: %w", e, err)
			}
		}
		for _, ip := range ips {
			if ip.IsLoopback() && !ip.Equal(net.IPv4(127, 0, 0, 1)) && !ip.Equal(net.IPv6loopback) {
				return nil, fmt.Errorf("WSHUB_AGENT_EGRESS_ALLOW: %q: of the host's loopback, only 127.0.0.1 and ::1 can be opened to sandboxes (a gateway on %s: listen on 127.0.0.1 too)", e, ip)
			}
			rules = append(rules, egressRule{Net: hostNet(ip), Port: uint16(p)})
		}
	}
	for _, r := range rules {
		// A network that starts in loopback is all loopback (127/8 and ::1 are the
		// only loopback networks). Its every port cannot be forwarded: pasta forwards
		// ports one by one.
		if _, n, _ := net.ParseCIDR(r.Net); r.Port == 0 && n.IP.IsLoopback() {
			return nil, fmt.Errorf("WSHUB_AGENT_EGRESS_ALLOW: %s is the host's loopback: open one port of it with host:port (127.0.0.1:4000), not every port", r.Net)
		}
	}
	return rules, nil
}

// loopbackPorts are the ports of the host's loopback the rules open: pasta forwards
// each from the sandbox's loopback to the host's, as the sandbox's 127.0.0.1 and ::1
// are its own.
func loopbackPorts(rules []egressRule) []uint16 {
	var ports []uint16
	for _, r := range rules {
		if _, n, err := net.ParseCIDR(r.Net); err == nil && r.Port != 0 && n.IP.IsLoopback() && !slices.Contains(ports, r.Port) {
			ports = append(ports, r.Port)
		}
	}
	return ports
}

// hostNet is the CIDR of one address.
func hostNet(ip net.IP) string {
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String() + "/32"
	}
	return ip.String() + "/128"
}

// lookupIP resolves a name with the system's resolver.
func lookupIP(ctx context.Context, host string) ([]net.IP, error) {
	return net.DefaultResolver.LookupIP(ctx, "ip", host)
}
