package runtimeapi_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wshub/wshub/internal/testkit/eventually"
)

// outage is an HTTP proxy in front of the hub that can answer as a load balancer does
// while the hub restarts: calls in flight are cut (502), new ones answered 503.
type outage struct {
	*httptest.Server
	mu      sync.Mutex
	down    bool
	cut     context.CancelFunc // ends the calls in flight
	epoch   context.Context
	refused atomic.Int64
	passed  atomic.Int64 // answers below 500 the hub gave through it
}

func newOutage(t *testing.T, hubURL string) *outage {
	target, err := url.Parse(hubURL)
	if err != nil {
		t.Fatal(err)
	}
	o := &outage{}
	o.epoch, o.cut = context.WithCancel(context.Background())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // each call cut says so
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode < 500 {
			o.passed.Add(1)
		}
		return nil
	}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		down, epoch := o.down, o.epoch
		o.mu.Unlock()
		if down {
			o.refused.Add(1)
			http.Error(w, "the hub is restarting", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(epoch, cancel)()
		proxy.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(func() { o.cut(); o.Close() })
	return o
}

// fail answers 503 for at least d and until the runtime has met it thrice, then lets
// calls through again until the hub has answered twice through it. A runtime that
// gives up meanwhile fails the test at once.
func (o *outage) fail(t *testing.T, d time.Duration, rt *inProcessRuntime) {
	t.Helper()
	o.mu.Lock()
	o.down = true
	o.cut()
	o.mu.Unlock()
	refused, until := o.refused.Load(), time.Now().Add(d)
	waitUntil(t, "the runtime to meet the outage", rt, func() bool { return o.refused.Load() >= refused+3 })
	time.Sleep(time.Until(until)) // sleep: the outage's length is the point of the test
	o.mu.Lock()
	o.down = false
	o.epoch, o.cut = context.WithCancel(context.Background())
	o.mu.Unlock()
	passed := o.passed.Load()
	waitUntil(t, "the hub to answer the runtime again", rt, func() bool { return o.passed.Load() >= passed+2 })
}

func waitUntil(t *testing.T, what string, rt *inProcessRuntime, cond func() bool) {
	t.Helper()
	eventually.Eventually(t, time.Minute, what, func() bool {
		select {
		case <-rt.ended:
			t.Fatalf("expected %s, but the runtime ended: %v", what, rt.err)
		default:
		}
		return cond()
	})
}
