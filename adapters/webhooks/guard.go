package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"code.dny.dev/ssrf"
)

// guardian refuses the IANA special-purpose ranges (loopback, RFC 1918, link-local,
// CGNAT 100.64/10, 0/8, multicast, reserved; for IPv6 everything outside 2000::/3,
// which covers ::1, ::, fc00::/7, fe80::/10, ff00::/8 and IPv4-mapped addresses) and
// every network but tcp4/tcp6. Webhook receivers may listen on any port, so ports are
// not restricted.
var guardian = ssrf.New(ssrf.WithAnyPort())

// cgnat is not in netip's predicates, so the standard-library check names it.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// refusedError is what checkDial returns; Send reports its text as the attempt error.
type refusedError struct {
	addr   string
	reason error // the guard's own explanation, kept for errors.Is
}

func (e *refusedError) Error() string {
	if errors.Is(e.reason, errHubAddress) {
		return "address " + e.addr + " is " + e.reason.Error()
	}
	return "address " + e.addr + " is not allowed"
}
func (e *refusedError) Unwrap() error { return e.reason }

// checkDial is the secure dialer's Control function. It runs after the name has been
// resolved and the socket created, but before connect, with the very address the socket
// is about to reach: a name that resolves (or re-resolves, DNS rebinding) to an inside
// address is refused here whatever it resolved to at registration.
func checkDial(network, address string, c syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedError{addr: address, reason: err}
	}
	if err := guardian.Safe(network, address, c); err != nil {
		return &refusedError{addr: ap.Addr().String(), reason: err}
	}
	// A second, independent opinion from the standard library: the guardian's tables
	// are generated data, and one dropped prefix in an upgrade must not open the inside.
	if stdlibDenied(ap.Addr()) {
		return &refusedError{addr: ap.Addr().String(), reason: ssrf.ErrProhibitedIP}
	}
	return nil
}

// stdlibDenied reports the ranges behaviour.md names (loopback, private, link-local,
// CGNAT, unique-local, multicast, unspecified), looking through IPv4-mapped IPv6.
func stdlibDenied(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || cgnat.Contains(ip)
}

// errHubAddress is a refusal of an address the hub's public host resolves to.
var errHubAddress = errors.New("this hub's own public address")

// hubGuard refuses, at dial, the addresses the hub's public host resolves to: a
// receiver's name that is an alias of the hub, registered before it became one or
// rebound since, reaches the hub as its own name would. The hub's addresses are looked
// up on each dial (pooled connections make dials rare), so a change of them is seen.
type hubGuard struct {
	host     string
	resolver *net.Resolver
	// insecure leaves loopback addresses alone, as loopback targets are allowed then.
	insecure bool
}

// dial wraps base's DialContext with the check; base's own Control (the guardian)
// runs after it.
func (g *hubGuard) dial(base net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		own, err := g.resolver.LookupNetIP(ctx, "ip", g.host)
		if err != nil {
			own = nil // fail open to the guardian alone: the hub's name not resolving is no reason to stop deliveries
		}
		d := base
		d.Control = func(network, address string, c syscall.RawConn) error {
			if ap, err := netip.ParseAddrPort(address); err == nil && g.own(own, ap.Addr()) {
				return &refusedError{addr: ap.Addr().String(), reason: errHubAddress}
			}
			if base.Control != nil {
				return base.Control(network, address, c)
			}
			return nil
		}
		return d.DialContext(ctx, network, addr)
	}
}

func (g *hubGuard) own(own []netip.Addr, a netip.Addr) bool {
	a = a.Unmap()
	if g.insecure && a.IsLoopback() {
		return false
	}
	return slices.ContainsFunc(own, func(h netip.Addr) bool { return h.Unmap() == a })
}
