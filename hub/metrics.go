package hub

import (
	"net/http"
	"net/http/pprof"
	"time"
)

// Metrics listener timeouts: a scrape is one small GET answered from memory (and a
// few quick database counts), so a client slower than this is not a monitoring system.
const (
	metricsReadTimeout  = 10 * time.Second
	metricsWriteTimeout = 30 * time.Second
	metricsIdleTimeout  = 60 * time.Second
)

// MetricsServer serves /metrics (Prometheus text format) and nothing else, for a
// listener of its own (WSHUB_METRICS_ADDR): the metrics are not authenticated, so they
// stay off the public port.
func (h *Hub) MetricsServer() *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h.Metrics.Handler())
	write := metricsWriteTimeout
	if h.Config.MetricsPprof {
		// net/http/pprof's handlers, on this mux alone (never the default one).
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
		// A profile is written when its seconds are over: pprof refuses one longer
		// than the write timeout.
		write = pprofWriteTimeout
	}
	return &http.Server{Handler: mux, ReadHeaderTimeout: metricsReadTimeout, ReadTimeout: metricsReadTimeout,
		WriteTimeout: write, IdleTimeout: metricsIdleTimeout}
}

// pprofWriteTimeout lets a CPU profile or trace of up to two minutes be taken.
const pprofWriteTimeout = 125 * time.Second
