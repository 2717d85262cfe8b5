// Package metrics exposes the hub's Prometheus metrics on /metrics: the webhook
// delivery and chat counters and latencies, plus the Go runtime and process collectors.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wshub/wshub/core"
)

// Metrics is one hub's registry. Each hub has its own (not the global default), so
// tests that run several hubs in one process do not share counters.
type Metrics struct {
	reg *prometheus.Registry

	attempted prometheus.Counter
	succeeded prometheus.Counter
	failed    prometheus.Counter
	givenUp   prometheus.Counter
	dropped   prometheus.Counter
	attempt   prometheus.Histogram
	latency   prometheus.Histogram
	chat      *chatMetrics
	turn      *turnMetrics
}

// New registers the collectors.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), chat: newChatMetrics(), turn: newTurnMetrics()}
	m.attempted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wshub_webhook_attempts_total", Help: "Webhook delivery attempts made."})
	m.succeeded = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wshub_webhook_deliveries_succeeded_total", Help: "Deliveries acknowledged by their endpoint (2xx)."})
	m.failed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wshub_webhook_attempts_failed_total", Help: "Attempts that failed (status, redirect, timeout, refused address)."})
	m.givenUp = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wshub_webhook_deliveries_given_up_total", Help: "Deliveries given up after their last allowed attempt."})
	m.dropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wshub_webhook_attempts_dropped_total", Help: "Attempts whose result was not recorded: the endpoint was deleted or the lease lost."})
	m.attempt = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "wshub_webhook_attempt_duration_seconds", Help: "Time one attempt took, request to response.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}})
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "wshub_webhook_delivery_latency_seconds", Help: "Time from a turn finishing to its delivery being acknowledged.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 36000}})
	m.reg.MustRegister(m.attempted, m.succeeded, m.failed, m.givenUp, m.dropped, m.attempt, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(m.chat.collectors()...)
	m.reg.MustRegister(m.turn.turns, m.turn.duration, m.turn.pushes)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	// ContinueOnError: a figure read from the database at scrape time that cannot be
	// read (the database slow or away) leaves that figure out; every other metric is
	// still served, where the default would answer the whole scrape with a 500.
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

// ObserveDelivery records one attempt; took is its wall time. Releases (hub stopping)
// are not attempts that count, so they are not recorded.
func (m *Metrics) ObserveDelivery(r core.DeliveryReport, took time.Duration) {
	if r.Outcome == core.DeliveryReleased {
		return
	}
	m.attempted.Inc()
	m.attempt.Observe(took.Seconds())
	switch r.Outcome {
	case core.DeliveryAcknowledged:
		m.succeeded.Inc()
		m.latency.Observe(r.SinceEvent.Seconds())
	case core.DeliveryRetrying:
		m.failed.Inc()
	case core.DeliveryGivenUp:
		m.failed.Inc()
		m.givenUp.Inc()
	case core.DeliveryDropped:
		m.dropped.Inc()
	}
}
