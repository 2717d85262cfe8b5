package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/metrics"
	"github.com/wshub/wshub/hub"
)

// Metrics are off unless WSHUB_METRICS_ADDR names a listener; then they are served there.
func TestServeMetricsOnlyWhenItsAddressIsSet(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	off := &hub.Hub{Metrics: metrics.New()}
	if addr, stop, err := serveMetrics(off, log); err != nil || addr != "" {
		t.Fatalf("expected no metrics listener without WSHUB_METRICS_ADDR, got %q, %v", addr, err)
	} else {
		stop()
	}

	on := &hub.Hub{Config: hub.Config{MetricsAddr: "127.0.0.1:0"}, Metrics: metrics.New()}
	addr, stop, err := serveMetrics(on, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "go_goroutines") {
		t.Fatalf("expected the metrics on WSHUB_METRICS_ADDR, got %d:\n%s", resp.StatusCode, b)
	}
	// Profiles only when asked for.
	if code := getStatus(t, "http://"+addr+"/debug/pprof/heap"); code != http.StatusNotFound {
		t.Fatalf("expected no profiles without WSHUB_METRICS_PPROF, got %d", code)
	}
	prof := &hub.Hub{Config: hub.Config{MetricsAddr: "127.0.0.1:0", MetricsPprof: true}, Metrics: metrics.New()}
	paddr, pstop, err := serveMetrics(prof, log)
	if err != nil {
		t.Fatal(err)
	}
	defer pstop()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1", "/metrics"} {
		if code := getStatus(t, "http://"+paddr+path); code != http.StatusOK {
			t.Errorf("%s: expected 200 with WSHUB_METRICS_PPROF, got %d", path, code)
		}
	}
}

func getStatus(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}
