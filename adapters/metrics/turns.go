package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wshub/wshub/core"
)

// turnMetrics count turns by agent and outcome and time them.
type turnMetrics struct {
	turns    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	pushes   *prometheus.CounterVec
}

func newTurnMetrics() *turnMetrics {
	return &turnMetrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wshub_turns_total",
			Help: "Recorded agent turns, by agent and outcome (completed, interrupted, error)."},
			[]string{"agent", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "wshub_turn_duration_seconds",
			Help:    "Time an agent worked on a turn, message taken to agent ended.",
			Buckets: []float64{.1, .5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600}},
			[]string{"agent"}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wshub_pushes_total",
			Help: "Pushes of workspace branches after turns, by result (pushed, refused)."},
			[]string{"result"}),
	}
}

// ObserveTurn is core.TurnObserver.
func (m *Metrics) ObserveTurn(r core.TurnReport) {
	m.turn.turns.WithLabelValues(r.Agent, r.Outcome).Inc()
	m.turn.duration.WithLabelValues(r.Agent).Observe(r.Took.Seconds())
	switch {
	case r.Commit.Pushed:
		m.turn.pushes.WithLabelValues(core.PushPushed).Inc()
	case r.Commit.PushRefused:
		m.turn.pushes.WithLabelValues(core.PushRefused).Inc()
	}
}

var _ core.TurnObserver = (*Metrics)(nil)

// WorkQueue reads, at each scrape, how many workspaces are in each state and how many
// user messages wait for or are in a turn.
type WorkQueue func(ctx context.Context) (byState map[string]int64, openMessages int64, err error)

// queueCollector asks the store at scrape time: the figures are the database's, so
// every replica reports the same and none keeps a count that drifts.
type queueCollector struct {
	read                 WorkQueue
	workspaces, messages *prometheus.Desc
}

// WatchWorkQueue adds wshub_workspaces{state} and wshub_messages_open, read at scrape.
func (m *Metrics) WatchWorkQueue(read WorkQueue) {
	m.reg.MustRegister(&queueCollector{read: read,
		workspaces: prometheus.NewDesc("wshub_workspaces", "Workspaces by state (deleted ones left out).", []string{"state"}, nil),
		messages:   prometheus.NewDesc("wshub_messages_open", "User messages pending or in a turn, over all workspaces.", nil, nil),
	})
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.workspaces; ch <- c.messages }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	byState, open, err := c.read(ctx)
	if err != nil {
		// Fail open: the scrape goes on without these figures.
		ch <- prometheus.NewInvalidMetric(c.workspaces, err)
		return
	}
	for state, n := range byState {
		ch <- prometheus.MustNewConstMetric(c.workspaces, prometheus.GaugeValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(c.messages, prometheus.GaugeValue, float64(open))
}
