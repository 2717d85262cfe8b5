// Package balancer is a round-robin reverse proxy on loopback, in front of hub replicas
// as a load balancer is: the tests' (hubtest.NewRoundRobin) and the soak's.
package balancer

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

// Balancer sends each request to the next of its targets, so one client's calls, and
// one runtime's, land on every hub. A hub that refuses a connection is passed over for
// FailTimeout (nginx's max_fails=1 and fail_timeout): strict turns would send every
// other call to a dead hub, and a call retried in step with another loop's could meet
// it every time. The request that met the refusal is answered 502 rather than tried on
// another hub, so clients see a restart as behind a balancer that does not retry, and
// retry themselves.
type Balancer struct {
	// URL is where it listens: http://127.0.0.1:<port>.
	URL string
	srv *http.Server

	mu      sync.Mutex
	targets []*url.URL
	next    int
	served  map[string]int       // target host -> requests sent to it
	down    map[string]time.Time // target host -> passed over until
}

// FailTimeout is how long a target that refused a connection is passed over.
const FailTimeout = 5 * time.Second

// Start starts a balancer over the targets' base URLs (none: SetTargets later).
func Start(targets ...string) (*Balancer, error) {
	b := &Balancer{served: map[string]int{}, down: map[string]time.Time{}}
	if err := b.SetTargets(targets...); err != nil {
		return nil, err
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
	b.URL = "http://" + ln.Addr().String()
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

// SetTargets replaces the base URLs requests go to, in turn.
func (b *Balancer) SetTargets(urls ...string) error {
	targets := make([]*url.URL, 0, len(urls))
	for _, t := range urls {
		u, err := url.Parse(t)
		if err != nil {
			return err
		}
		targets = append(targets, u)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.targets = targets
	return nil
}

// Close stops it.
func (b *Balancer) Close() { _ = b.srv.Close() }

func (b *Balancer) markDown(host string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.down[host] = time.Now().Add(FailTimeout)
}

// pick is the next target that is not passed over, or the next one if all are.
func (b *Balancer) pick() *url.URL {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.targets) == 0 {
		return &url.URL{Scheme: "http", Host: "127.0.0.1:1"} // refused: no hub yet
	}
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

// Served counts the requests sent to each target host (host:port) so far.
func (b *Balancer) Served() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.served)
}
