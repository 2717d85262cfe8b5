package hubtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/webhook"
)

// Received is one request a Receiver got.
type Received struct {
	Header http.Header
	Body   []byte
	At     time.Time
	Event  webhook.Event // decoded body (zero when it does not decode)
}

// Attempt is the service-delivery-attempt header as a number (0 when absent).
func (r Received) Attempt() int {
	var n int
	_ = json.Unmarshal([]byte(r.Header.Get(webhook.HeaderAttempt)), &n)
	return n
}

// Receiver is a webhook endpoint on loopback that records every request and answers
// with respond (200 when respond is nil).
type Receiver struct {
	URL     string
	mu      sync.Mutex
	got     []Received
	arrived chan struct{}
	respond func(w http.ResponseWriter, r Received)
}

// NewReceiver starts a receiver that stops when t ends. respond, when set, writes the
// answer (and may sleep or block to play a slow endpoint).
func NewReceiver(t testing.TB, respond func(w http.ResponseWriter, r Received)) *Receiver {
	rc := &Receiver{arrived: make(chan struct{}, 1), respond: respond}
	srv := httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(srv.Close)
	rc.URL = srv.URL + "/hook"
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	got := Received{Header: r.Header.Clone(), Body: body, At: time.Now()}
	_ = json.Unmarshal(body, &got.Event)
	rc.mu.Lock()
	rc.got = append(rc.got, got)
	rc.mu.Unlock()
	select {
	case rc.arrived <- struct{}{}:
	default:
	}
	if rc.respond != nil {
		rc.respond(w, got)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// Received returns what arrived so far.
func (rc *Receiver) Received() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.got...)
}

// Wait returns once at least n requests arrived, failing t after 30 s.
func (rc *Receiver) Wait(t testing.TB, n int) []Received {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		if got := rc.Received(); len(got) >= n {
			return got
		}
		select {
		case <-rc.arrived:
		case <-time.After(20 * time.Millisecond):
		case <-deadline.C:
			t.Fatalf("webhook receiver: expected %d requests within 30 s, got %d", n, len(rc.Received()))
		}
	}
}

// Clock is a settable clock for core (hubtest.WithClock): it stands still until
// Advance moves it, so tests drive backoff schedules without sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts at the real time.
func NewClock() *Clock { return &Clock{now: time.Now().Truncate(time.Millisecond)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
