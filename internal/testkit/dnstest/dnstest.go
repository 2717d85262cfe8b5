// Package dnstest is a DNS server for tests: enough of DNS (RFC 1035) for a resolver to
// look a name up, every name answered with one address.
package dnstest

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

// Serve answers the queries that reach pc until t ends: every A query with ip, every
// other query with no records. It returns the count of queries answered.
func Serve(t testing.TB, pc net.PacketConn, ip net.IP) *atomic.Int32 {
	return ServeEach(t, pc, func(string) net.IP { return ip })
}

// ServeEach is Serve with each name's address chosen by ipOf (the name asked,
// lowercased, without its final dot), which must be an IPv4 address.
func ServeEach(t testing.TB, pc net.PacketConn, ipOf func(name string) net.IP) *atomic.Int32 {
	t.Cleanup(func() { pc.Close() })
	var queries atomic.Int32
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := Answer(buf[:n], ipOf(questionName(buf[:n]))); resp != nil {
				queries.Add(1)
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return &queries
}

// Answer builds the response to a one-question DNS query (RFC 1035 4.1): for type A one
// record with ip (TTL 0: a rebinding server would answer differently next time), for
// any other type none. Nil when q is not a query it can read.
func Answer(q []byte, ip net.IP) []byte {
	const headerLen = 12
	if len(q) < headerLen {
		return nil
	}
	i := headerLen
	for i < len(q) && q[i] != 0 { // question name: length-prefixed labels, then 0
		i += 1 + int(q[i])
	}
	end := i + 1 + 4 // the 0, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	isA := binary.BigEndian.Uint16(q[i+1:]) == 1
	resp := append([]byte{}, q[:2]...)     // ID
	resp = append(resp, 0x84|q[2]&1, 0x80) // QR, AA, RD as asked; RA; NOERROR
	resp = append(resp, 0, 1, 0, 0, 0, 0, 0, 0)
	resp = append(resp, q[headerLen:end]...)
	if isA {
		resp[7] = 1 // ANCOUNT
		resp = append(resp,
			0xc0, headerLen, // name: pointer to the question's
			0, 1, 0, 1, // type A, class IN
			0, 0, 0, 0, // TTL 0
			0, 4)
		resp = append(resp, ip.To4()...)
	}
	return resp
}

// questionName reads a query's question name as text ("" when it cannot).
func questionName(q []byte) string {
	var labels []string
	for i := 12; i < len(q) && q[i] != 0; i += 1 + int(q[i]) {
		if i+1+int(q[i]) > len(q) {
			return ""
		}
		labels = append(labels, strings.ToLower(string(q[i+1:i+1+int(q[i])])))
	}
	return strings.Join(labels, ".")
}

// Resolver is a resolver that asks only the server listening on addr (a Serve's pc).
func Resolver(addr net.Addr) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr.String())
	}}
}
