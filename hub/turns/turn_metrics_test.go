package turns_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
)

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestTurnsAndTheWorkQueueAreMeasured(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	ok := hubtest.CreateWorkspace(t, h, "write measured")
	bad := hubtest.CreateWorkspace(t, h, "fail please")
	hubtest.WaitFor(t, h, ok, "the turn done", hubtest.IdleAfterTurns(1))
	hubtest.WaitFor(t, h, bad, "the turn done", hubtest.IdleAfterTurns(1))
	m := scrape(t, h.MetricsURL)
	for _, want := range []string{
		`wshub_turns_total{agent="agent_1",outcome="completed"} 1`,
		`wshub_turns_total{agent="agent_1",outcome="error"} 1`,
		`wshub_turn_duration_seconds_count{agent="agent_1"} 2`,
		`wshub_workspaces{state="ready"} 2`,
		`wshub_messages_open 0`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("expected %q in /metrics", want)
		}
	}
	if t.Failed() {
		var lines []string
		for _, l := range strings.Split(m, "\n") {
			if strings.HasPrefix(l, "wshub_turn") || strings.HasPrefix(l, "wshub_workspaces") || strings.HasPrefix(l, "wshub_messages") {
				lines = append(lines, l)
			}
		}
		t.Logf("got:\n%s", strings.Join(lines, "\n"))
	}

	// A workspace with a slow turn and two messages queued behind it: three open, in one
	// workspace (the other two have none).
	slow := hubtest.CreateWorkspace(t, h, "sleep 3")
	for _, text := range []string{"one", "two"} {
		h.Call("POST", "/v1/api/workspaces/"+slow+"/messages", h.Key, map[string]any{"text": text}).Expect(t, 200, "")
	}
	m = scrape(t, h.MetricsURL)
	for _, want := range []string{
		`wshub_messages_open 3`, `wshub_workspaces_with_open_messages 1`, `wshub_workspace_queue_depth_max 3`,
	} {
		if !strings.Contains(m, want+"\n") {
			t.Errorf("expected %q in /metrics while the slow turn runs", want)
		}
	}
}

// With the database away, /metrics still answers: the figures read from it at scrape
// time are left out, every other metric is served.
func TestMetricsScrapeSurvivesTheDatabaseAway(t *testing.T) {
	t.Parallel()
	h, px := hubtest.StartBehindProxy(t, 30*time.Second)
	px.Cut()
	defer px.Restore()
	resp, err := http.Get(h.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "go_goroutines") || strings.Contains(string(b), "wshub_messages_open ") {
		t.Fatalf("expected 200 with the process metrics and without the database's figures, got %d:\n%.500s", resp.StatusCode, b)
	}
}

// /metrics is not authenticated: the public port does not serve it; the metrics
// listener (WSHUB_METRICS_ADDR) serves it and nothing else, with timeouts so a stalled
// client cannot hold its connections.
func TestMetricsAreServedOnTheirOwnListenerOnly(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	for _, tt := range []struct {
		url  string
		want int
	}{
		{h.URL + "/metrics", http.StatusNotFound},
		{h.MetricsURL + "/metrics", http.StatusOK},
		{h.MetricsURL + "/v1/api/workspaces", http.StatusNotFound},
		{h.MetricsURL + "/healthz", http.StatusNotFound},
	} {
		resp, err := http.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s: expected %d, got %d: %s", tt.url, tt.want, resp.StatusCode, b)
		}
		if tt.want == http.StatusOK && !strings.Contains(string(b), "go_goroutines") {
			t.Errorf("GET %s: expected the Prometheus metrics, got:\n%s", tt.url, b)
		}
	}
	srv := h.MetricsServer()
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("expected every timeout of the metrics listener set, got read header %s, read %s, write %s, idle %s",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
}
