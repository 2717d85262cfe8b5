// Package netguard says which addresses the hub may dial on someone else's behalf:
// a webhook receiver's, or the repository an account's owner gave in the app. Inside
// addresses (the hub's host, its private networks, the metadata service) are refused
// whatever name led to them.
package netguard

import (
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// guardian refuses the IANA special-purpose ranges (loopback, RFC 1918, link-local,
// CGNAT 100.64/10, 0/8, multicast, reserved; for IPv6 everything outside 2000::/3,
// which covers ::1, ::, fc00::/7, fe80::/10, ff00::/8 and IPv4-mapped addresses) and
// every network but tcp4/tcp6. Receivers and forges may listen on any port, so ports
// are not restricted.
var guardian = ssrf.New(ssrf.WithAnyPort())

// cgnat is not in netip's predicates, so the standard-library check names it.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// ErrProhibited is what a refused address is refused with.
var ErrProhibited = ssrf.ErrProhibitedIP

// Safe is a dialer's Control function: it runs after the name has been resolved and
// the socket created, before connect, with the very address the socket is about to
// reach, so a name rebound since it was checked is refused here.
func Safe(network, address string, c syscall.RawConn) error {
	if err := guardian.Safe(network, address, c); err != nil {
		return err
	}
	if ap, err := netip.ParseAddrPort(address); err != nil || StdlibDenied(ap.Addr()) {
		return ErrProhibited
	}
	return nil
}

// SafeAddr is Safe for an address alone (nil: allowed).
func SafeAddr(ip netip.Addr) error {
	if err := guardian.SafeAddr(ip); err != nil {
		return err
	}
	if StdlibDenied(ip) {
		return ErrProhibited
	}
	return nil
}

// StdlibDenied is a second, independent opinion from the standard library: the
// guardian's tables are generated data, and one dropped prefix in an upgrade must not
// open the inside. It reports the ranges behaviour.md names (loopback, private,
// link-local, CGNAT, unique-local, multicast, unspecified), looking through
// IPv4-mapped IPv6.
func StdlibDenied(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || cgnat.Contains(ip)
}

// Client is an HTTP client that dials public addresses only (loopback too when
// allowLoopback: tests and development), checked at connect, so a redirect or a
// name rebound inside reaches nothing there. It uses no proxy from the environment:
// a proxy would dial on the client's behalf, unchecked. Calls are bounded by timeout.
func Client(timeout time.Duration, allowLoopback bool) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, Control: func(network, address string, c syscall.RawConn) error {
		if ap, err := netip.ParseAddrPort(address); err == nil && allowLoopback && ap.Addr().Unmap().IsLoopback() {
			return nil
		}
		return Safe(network, address, c)
	}}
	t := &http.Transport{DialContext: d.DialContext, ForceAttemptHTTP2: true, TLSHandshakeTimeout: 10 * time.Second,
		ResponseHeaderTimeout: timeout, IdleConnTimeout: 90 * time.Second, MaxIdleConns: 32}
	return &http.Client{Timeout: timeout, Transport: t}
}
