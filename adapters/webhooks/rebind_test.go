package webhooks_test

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/wshub/wshub/adapters/webhooks"
	"github.com/wshub/wshub/core"
)

// A public-looking name that passes registration but resolves to loopback at delivery
// (DNS rebinding) is refused, because the check runs on the address being dialed.
func TestSecureRefusesNameResolvingToLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	resolver, queries := loopbackResolver(t)

	url := "https://rebind.example.com:" + port + "/hook"
	if _, err := (core.WebhookURLPolicy{}).CheckWebhookURL(url); err != nil {
		t.Fatalf("registration: expected %s accepted, got %v", url, err)
	}
	res := newSender(t, webhooks.Options{Resolver: resolver}).Send(context.Background(), attempt(url))
	if want := "address 127.0.0.1 is not allowed"; res.Error != want || res.StatusCode != 0 {
		t.Errorf("secure: expected {StatusCode:0 Error:%q}, got %+v", want, res)
	}
	if queries.Load() == 0 {
		t.Error("expected the name to be resolved through the test resolver, got no query")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("secure: expected no request at the receiver, got %d", n)
	}

	// Control: the same name and resolver reach the receiver when insecure targets are allowed.
	res = newSender(t, webhooks.Options{Resolver: resolver, AllowInsecure: true}).
		Send(context.Background(), attempt("http://rebind.example.com:"+port+"/hook"))
	if !res.Acknowledged() || hits.Load() != 1 {
		t.Errorf("insecure: expected acknowledged with 1 request, got %+v with %d", res, hits.Load())
	}
}

// loopbackResolver is a resolver whose DNS server answers every A query with 127.0.0.1
// and every other query with no records. It also counts queries.
func loopbackResolver(t *testing.T) (*net.Resolver, *atomic.Int32) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	var queries atomic.Int32
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := answerLoopback(buf[:n]); resp != nil {
				queries.Add(1)
				pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", pc.LocalAddr().String())
		},
	}, &queries
}

// answerLoopback builds the response to a one-question DNS query (RFC 1035 4.1).
func answerLoopback(q []byte) []byte {
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
			0, 0, 0, 0, // TTL 0: a rebinding server would answer differently next time
			0, 4, 127, 0, 0, 1)
	}
	return resp
}
