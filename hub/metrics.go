package hub

import (
	"net/http"
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
	return &http.Server{Handler: mux, ReadHeaderTimeout: metricsReadTimeout, ReadTimeout: metricsReadTimeout,
		WriteTimeout: metricsWriteTimeout, IdleTimeout: metricsIdleTimeout}
}
