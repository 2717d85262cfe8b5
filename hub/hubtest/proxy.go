package hubtest

import (
	"context"
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/hub"
)

// Proxy is a TCP proxy on loopback in front of the test PostgreSQL server. A test puts
// it between a hub and its database (WithStoreProxy) and cuts it to take the database
// away: every connection through it is closed and new ones are refused, as when the
// server stops, until Restore.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// NewProxy starts a proxy to the server of DATABASE_URL, closed when t ends.
func NewProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(os.Getenv("DATABASE_URL"))
	if err != nil || u.Host == "" {
		t.Fatalf("proxy: DATABASE_URL must be a postgres:// URL with a host, got %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// NewTCPProxy starts a proxy on loopback whose target is set later (SetTarget): a
// test puts it between a hub and its remote runtimes to cut their network.
func NewTCPProxy(t testing.TB) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.Cut()
	})
	return p
}

// Addr is the proxy's address (host:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetTarget sets where new connections go.
func (p *Proxy) SetTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

// WithStoreProxy points the hub's store and its LISTEN connection at the proxy.
func WithStoreProxy(p *Proxy) Option {
	return configOption(func(c *hub.Config) { c.DatabaseURL = p.Via(c.DatabaseURL) })
}

// Via returns dbURL with the proxy in place of the server.
func (p *Proxy) Via(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		panic("proxy: " + err.Error()) // URLs come from pgtest, never from a user
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// Cut closes every connection through the proxy and refuses new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed when the test ends
		}
		go p.pipe(c)
	}
}

// track registers c unless the proxy is cut (then c is closed).
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *Proxy) pipe(client net.Conn) {
	if !p.track(client) {
		return
	}
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	server, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		p.untrack(client)
		return
	}
	if !p.track(server) {
		p.untrack(client)
		return
	}
	defer p.untrack(client, server)
	go func() {
		_, _ = io.Copy(server, client)
		p.untrack(client, server)
	}()
	_, _ = io.Copy(client, server)
}

// storeVia opens a second store on url (an option put a proxy in front of the test
// database), closed when t ends.
func storeVia(t testing.TB, url string) *postgres.Store {
	t.Helper()
	store, err := postgres.Open(context.Background(), url, postgres.Options{MaxOpenConns: 30})
	if err != nil {
		t.Fatalf("open store via %s: %v", url, err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}
