package s3test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy is a loopback TCP proxy in front of a Server that cuts every connection on
// which the client sends more than a given number of bytes: the network, or the
// server, failing in the middle of an upload. Requests smaller than that (reads,
// deletes, small writes) pass as they are.
type Proxy struct {
	// Endpoint is the proxy's URL, to give a client in place of the server's.
	Endpoint string
	after    int64
	target   string
	cuts     atomic.Int64
}

// CuttingProxy starts a Proxy in front of s that passes after bytes of each
// connection's requests to the server, then closes the connection both ways.
func (s *Server) CuttingProxy(t testing.TB, after int64) *Proxy {
	t.Helper()
	u, err := url.Parse(s.Endpoint)
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	// The bytes pass as they are, so the proxy is as good in front of https.
	p := &Proxy{Endpoint: u.Scheme + "://" + l.Addr().String(), after: after, target: u.Host}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	track := func(c net.Conn, open bool) {
		mu.Lock()
		defer mu.Unlock()
		if open {
			conns[c] = true
		} else {
			delete(conns, c)
		}
	}
	wg.Go(func() {
		for {
			client, err := l.Accept()
			if err != nil {
				return // closed by the cleanup
			}
			track(client, true)
			wg.Go(func() {
				defer track(client, false)
				p.serve(client)
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return p
}

// Cuts is how many connections the proxy has cut.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

// serve passes one connection through, cutting it past p.after bytes from the client.
func (p *Proxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(client, server)
		client.Close() // the server hung up: so does the proxy
	}()
	if _, err := io.CopyN(server, client, p.after); err == nil {
		// Past the limit: one more byte from the client and the connection is cut,
		// half a request sent.
		var one [1]byte
		if n, _ := client.Read(one[:]); n > 0 {
			p.cuts.Add(1)
		}
	}
	client.Close()
	server.Close()
	<-done
}
