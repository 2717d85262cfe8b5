package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"github.com/wshub/wshub/adapters/netguard"
)

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

// checkDial is the secure dialer's Control function (netguard.Safe): a name that
// resolves (or re-resolves, DNS rebinding) to an inside address is refused at connect
// whatever it resolved to at registration.
func checkDial(network, address string, c syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusedError{addr: address, reason: err}
	}
	if err := netguard.Safe(network, address, c); err != nil {
		return &refusedError{addr: ap.Addr().String(), reason: err}
	}
	return nil
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
