package webhooks_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/wshub/wshub/adapters/webhooks"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/dnstest"
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
	queries := dnstest.Serve(t, pc, net.IPv4(127, 0, 0, 1))
	return dnstest.Resolver(pc.LocalAddr()), queries
}

// A receiver's name that resolves to an address of the hub's public host (an alias of
// the hub, or a name rebound to it after registration) is refused at the dial, and
// said so, before any other check: the hub's address is refused even where the
// ranges allow it.
func TestAnAliasOfTheHubIsRefusedAtDelivery(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	resolver, _ := loopbackResolver(t) // hub.example.com and alias.example.net alike

	res := newSender(t, webhooks.Options{Resolver: resolver, HubHost: "hub.example.com"}).
		Send(context.Background(), attempt("https://alias.example.net:"+port+"/hook"))
	if want := "address 127.0.0.1 is this hub's own public address"; res.Error != want || res.StatusCode != 0 {
		t.Errorf("expected {StatusCode:0 Error:%q}, got %+v", want, res)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("expected no request at the receiver, got %d", n)
	}
	// A development hub, which allows loopback targets, leaves loopback alone: its
	// receivers share the machine's loopback with it.
	res = newSender(t, webhooks.Options{Resolver: resolver, HubHost: "hub.example.com", AllowInsecure: true}).
		Send(context.Background(), attempt("http://alias.example.net:"+port+"/hook"))
	if !res.Acknowledged() || hits.Load() != 1 {
		t.Errorf("insecure: expected acknowledged with 1 request, got %+v with %d", res, hits.Load())
	}
}
