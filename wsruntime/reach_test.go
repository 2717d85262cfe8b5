package wsruntime

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// The client against a real loopback server, with a clock that moves a minute each
// time it is read: the default ten minutes pass in a few milliseconds of retries.

type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func testClient(url string, http *http.Client) (*client, *[]error) {
	clock := &steppingClock{t: time.Unix(0, 0), step: time.Minute}
	var lost []error
	c := &client{url: url, token: "wsrt_test", session: "session-test", http: http,
		backoff: core.Backoff{First: time.Millisecond, Max: time.Millisecond},
		reach:   &reach{after: DefaultHubLostAfter, now: clock.now}}
	c.onLost = func(err error) { lost = append(lost, err) }
	return c, &lost
}

// scripted answers its requests with the statuses given, in order, then 200.
func scripted(t *testing.T, statuses ...int) *httptest.Server {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		status := http.StatusOK
		if len(statuses) > 0 {
			status, statuses = statuses[0], statuses[1:]
		}
		mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func repeat(status, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = status
	}
	return out
}

func TestAHubUnreachableForTheSettingIsGivenUp(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + closed.Addr().String()
	closed.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hanging.Close)
	impatient := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 20 * time.Millisecond}}
	for _, tt := range []struct {
		name string
		url  string
		http *http.Client
	}{
		{"connection refused", refused, http.DefaultClient},
		{"503", scripted(t, repeat(503, 100)...).URL, http.DefaultClient},
		{"502", scripted(t, repeat(502, 100)...).URL, http.DefaultClient},
		{"504", scripted(t, repeat(504, 100)...).URL, http.DefaultClient},
		{"500", scripted(t, repeat(500, 100)...).URL, http.DefaultClient},
		{"no answer in time", hanging.URL, impatient},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, lost := testClient(tt.url, tt.http)
			_, err := c.call(context.Background(), request{method: "POST", path: "/heartbeat"}, nil)
			if !errors.Is(err, ErrHubLost) {
				t.Fatalf("expected ErrHubLost, got %v", err)
			}
			// The first failure starts the clock; the one read 11 minutes later is past 10.
			var le *hubLostError
			if !errors.As(err, &le) {
				t.Fatalf("expected a *hubLostError, got %T", err)
			}
			for _, want := range []string{"the hub at " + tt.url, "unreachable for 11m0s", "longer than WSHUB_RUNTIME_HUB_LOST_AFTER (10m0s)"} {
				if !strings.Contains(le.why(), want) {
					t.Fatalf("expected the reason to say %q, got %q", want, le.why())
				}
			}
			if len(*lost) != 1 || (*lost)[0] != err {
				t.Fatalf("expected the runtime told once, with the error, got %v", *lost)
			}
		})
	}
}

func TestAnAnswerOfTheHubStopsTheClock(t *testing.T) {
	// Each outage is 8 failures (7 minutes by the clock), under the 10: the hub's answer
	// between two outages keeps them from adding up to 16.
	for _, tt := range []struct {
		name     string
		statuses []int
		want     []int // each call's status (0: an error other than ErrHubLost)
	}{
		{"a 503 for a while, then an answer", append(repeat(503, 8), 200), []int{200}},
		{"two outages with an answer between", append(append(repeat(503, 8), 200), repeat(503, 8)...), []int{200, 200}},
		{"a 4xx between two outages", append(append(repeat(503, 8), 409), repeat(502, 8)...), []int{409, 200}},
		{"4xx answers only", repeat(400, 30), repeat(400, 30)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, lost := testClient(scripted(t, tt.statuses...).URL, http.DefaultClient)
			for i, want := range tt.want {
				resp, err := c.do(context.Background(), request{method: "POST", path: "/heartbeat"})
				got := 0
				var he *hubError
				switch {
				case err == nil:
					got = resp.StatusCode
					resp.Body.Close()
				case errors.As(err, &he):
					got = he.Status
				}
				if got != want || errors.Is(err, ErrHubLost) {
					t.Fatalf("call %d: expected %d, got %d (%v)", i+1, want, got, err)
				}
			}
			if len(*lost) != 0 {
				t.Fatalf("expected the hub never given up, got %v", *lost)
			}
		})
	}
}
