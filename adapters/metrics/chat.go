package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wshub/wshub/core"
)

// chatMetrics are the chat front-ends' counters: inbox events handled and posts
// (replies and notices) made, by platform and result, and how long a finished turn
// took to reach its thread.
type chatMetrics struct {
	events  *prometheus.CounterVec
	posts   *prometheus.CounterVec
	latency *prometheus.HistogramVec
	// unknown counts forge deliveries for repositories no project takes events from.
	unknown *prometheus.CounterVec
	// unknownInstallation counts GitHub App deliveries of installations no account has.
	unknownInstallation *prometheus.CounterVec
}

func newChatMetrics() *chatMetrics {
	return &chatMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wshub_chat_events_total",
			Help: "Received chat events handled, by platform and result (handled, retrying, failed)."},
			[]string{"platform", "result"}),
		posts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wshub_chat_posts_total",
			Help: "Posts of turn replies and hub notices in threads, by platform, kind (reply, notice) and result (posted, retrying, failed)."},
			[]string{"platform", "kind", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wshub_chat_reply_latency_seconds",
			Help:    "Time from a turn finishing to its reply being posted in the thread (last part).",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 3600}},
			[]string{"platform"}),
		unknown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wshub_forge_events_unknown_repository_total",
			Help: "Forge deliveries answered and ignored: no project takes events from their repository, by forge."},
			[]string{"forge"}),
		unknownInstallation: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wshub_forge_events_unknown_installation_total",
			Help: "Forge deliveries answered and ignored: a GitHub App installation no account has, by forge."},
			[]string{"forge"}),
	}
}

func (c *chatMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.events, c.posts, c.latency, c.unknown, c.unknownInstallation}
}

// results names core's row statuses for people reading dashboards.
var results = map[string]string{
	"done": "handled", string(core.DeliveryDelivered): "posted", string(core.DeliveryPending): "retrying",
	string(core.DeliveryFailed): "failed",
}

// ObserveChatEvent records one handled inbox event.
func (m *Metrics) ObserveChatEvent(r core.ChatEventReport) {
	m.chat.events.WithLabelValues(r.Platform, results[r.Status]).Inc()
}

// ObserveChatPost records one reply or notice post.
func (m *Metrics) ObserveChatPost(r core.ChatPostReport) {
	m.chat.posts.WithLabelValues(r.Platform, r.Kind, results[string(r.Status)]).Inc()
	if r.Kind == "reply" && r.Status == core.DeliveryDelivered {
		m.chat.latency.WithLabelValues(r.Platform).Observe(r.Since.Seconds())
	}
}

// ObserveForgeUnknownInstallation records a forge delivery from a GitHub App
// installation no account has.
func (m *Metrics) ObserveForgeUnknownInstallation(kind string) {
	m.chat.unknownInstallation.WithLabelValues(kind).Inc()
}

// ObserveForgeUnknownRepository records a forge delivery for a repository no project
// takes events from.
func (m *Metrics) ObserveForgeUnknownRepository(kind string) {
	m.chat.unknown.WithLabelValues(kind).Inc()
}
