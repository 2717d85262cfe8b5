package main

import (
	"errors"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// balancer is a round-robin reverse proxy on loopback in front of the soak's hubs, as a
// load balancer in front of replicas: each request goes to the next hub, so one client's
// calls, and one runtime's, land on both. A hub that refuses a connection is passed
// over for balancerFailTimeout (nginx's max_fails=1 and fail_timeout): strict turns
// would send every other call to a dead hub. The request that met the refusal is
// answered 502 rather than tried on the other hub, so the soak's clients see a
// restart as they would behind a balancer that does not retry, and retry themselves.
// (hubtest.RoundRobin is the tests' copy of the idea; it needs package testing.)
type balancer struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	targets []*url.URL
	next    int
	served  map[string]int       // target host -> requests sent to it
	down    map[string]time.Time // target host -> passed over until
}

const balancerFailTimeout = 5 * time.Second

// newBalancer starts a balancer over the targets' base URLs.
func newBalancer(targets ...string) (*balancer, error) {
	b := &balancer{served: map[string]int{}, down: map[string]time.Time{}}
	for _, t := range targets {
		u, err := url.Parse(t)
		if err != nil {
			return nil, err
		}
		b.targets = append(b.targets, u)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	// Below the hubs' keep-alive idle timeout (60 s), so the balancer never sends a
	// request on a connection the hub is closing: that would be a 502 no kill caused.
	tr.IdleConnTimeout = 30 * time.Second
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(b.pick())
			pr.Out.Host = pr.In.Host
		},
		Transport:     tr,
		FlushInterval: -1, // long polls and event streams pass as they are written
		// A request cut by a kill is its client's to retry, not news for the log.
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if errors.Is(err, syscall.ECONNREFUSED) {
				b.markDown(req.URL.Host)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	// No write timeout: runtimes' long polls and event streams stay open.
	b.srv = &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	b.url = "http://" + ln.Addr().String()
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

func (b *balancer) close() { _ = b.srv.Close() }

func (b *balancer) markDown(host string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down[host] = time.Now().Add(balancerFailTimeout)
}

// pick is the next target that is not passed over, or the next one if all are.
func (b *balancer) pick() *url.URL {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.targets[b.next%len(b.targets)]
	for range b.targets {
		t := b.targets[b.next%len(b.targets)]
		if until, ok := b.down[t.Host]; !ok || time.Now().After(until) {
			u = t
			break
		}
		b.next++
	}
	b.next++
	b.served[u.Host]++
	return u
}

// servedBy counts the requests sent to each target host so far.
func (b *balancer) servedBy() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.served)
}
