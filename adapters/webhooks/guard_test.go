package webhooks

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"code.dny.dev/ssrf"

	"github.com/wshub/wshub/adapters/netguard"
)

func TestCheckDial(t *testing.T) {
	for _, tc := range []struct {
		ip      string
		allowed bool
	}{
		{"127.0.0.1", false},        // loopback
		{"10.1.2.3", false},         // private
		{"172.16.0.1", false},       // private
		{"192.168.1.1", false},      // private
		{"169.254.169.254", false},  // link-local (cloud metadata)
		{"100.64.0.1", false},       // CGNAT
		{"0.0.0.0", false},          // unspecified
		{"::1", false},              // loopback
		{"::", false},               // unspecified
		{"fc00::1", false},          // unique-local
		{"fd12:3456::1", false},     // unique-local
		{"fe80::1", false},          // link-local
		{"ff02::1", false},          // multicast
		{"224.0.0.1", false},        // multicast
		{"::ffff:127.0.0.1", false}, // IPv4-mapped loopback
		{"::ffff:10.0.0.7", false},  // IPv4-mapped private
		{"93.184.216.34", true},
		{"2606:4700::1111", true},
	} {
		t.Run(tc.ip, func(t *testing.T) {
			network := "tcp4"
			if netip.MustParseAddr(tc.ip).Is6() {
				network = "tcp6"
			}
			// Webhook receivers may use any port, so a custom one changes nothing.
			for _, port := range []string{"443", "8443"} {
				err := checkDial(network, net.JoinHostPort(tc.ip, port), nil)
				if tc.allowed {
					if err != nil {
						t.Errorf("port %s: expected allowed, got %v", port, err)
					}
					continue
				}
				want := "address " + tc.ip + " is not allowed"
				if err == nil || err.Error() != want {
					t.Errorf("port %s: expected %q, got %v", port, want, err)
				}
				if !errors.Is(err, ssrf.ErrProhibitedIP) {
					t.Errorf("port %s: expected the error to wrap ssrf.ErrProhibitedIP, got %v", port, err)
				}
			}
			// Each layer holds on its own: the library, and the standard-library check.
			ip := netip.MustParseAddr(tc.ip)
			if got := netguard.SafeAddr(ip) == nil; got != tc.allowed {
				t.Errorf("netguard.SafeAddr: expected allowed=%v, got %v", tc.allowed, got)
			}
			if got := !netguard.StdlibDenied(ip); got != tc.allowed {
				t.Errorf("stdlib check alone: expected allowed=%v, got %v", tc.allowed, got)
			}
		})
	}
}

func TestCheckDialRefusesOtherNetworks(t *testing.T) {
	if err := checkDial("udp4", "93.184.216.34:443", nil); err == nil {
		t.Error("udp4: expected refused, got allowed")
	}
}
