package hubtest

import (
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"syscall"
	"testing"
	"time"
)

// RoundRobin is an HTTP reverse proxy on loopback that sends each request to the next
// of its targets, as a load balancer in front of hub replicas does: a runtime behind
// it talks to every replica in turn. A target that refuses a connection is passed over
// for a while (nginx's max_fails=1 and fail_timeout): strict turns would otherwise
// send every other call to a dead replica, and a call retried in step with another
// loop's could meet it every time.
type RoundRobin struct {
	URL string

	mu      sync.Mutex
	targets []*url.URL
	next    int
	served  map[string]int
	down    map[string]time.Time // target -> passed over until
}

// failTimeout is how long a target that refused a connection is passed over.
const failTimeout = 5 * time.Second

func (r *RoundRobin) markDown(u *url.URL) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down[u.Host] = time.Now().Add(failTimeout)
}

// NewRoundRobin starts a proxy with no targets (SetTargets), closed when t ends.
func NewRoundRobin(t testing.TB) *RoundRobin {
	t.Helper()
	r := &RoundRobin{served: map[string]int{}, down: map[string]time.Time{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(r.pick())
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1, // long polls and event streams pass as they are written
		// A call cut short (a hub stopping, a caller giving up) is the runtime's to
		// retry, not news for the test's log.
		ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
			if errors.Is(err, syscall.ECONNREFUSED) {
				r.markDown(req.URL)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// SetTargets sets the base URLs requests go to, in turn.
func (r *RoundRobin) SetTargets(urls ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.targets = r.targets[:0]
	for _, u := range urls {
		parsed, err := url.Parse(u)
		if err != nil {
			panic(err)
		}
		r.targets = append(r.targets, parsed)
	}
}

func (r *RoundRobin) pick() *url.URL {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.targets) == 0 {
		return &url.URL{Scheme: "http", Host: "127.0.0.1:1"} // refused: no replica yet
	}
	u := r.targets[r.next%len(r.targets)]
	for range r.targets { // the next one up, or the next one if none is
		if until, ok := r.down[r.targets[r.next%len(r.targets)].Host]; !ok || time.Now().After(until) {
			u = r.targets[r.next%len(r.targets)]
			break
		}
		r.next++
	}
	r.next++
	r.served[u.String()]++
	return u
}

// Served counts the requests sent to each target so far.
func (r *RoundRobin) Served() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.served)
}
