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
	m.turn.turns.WithLabelValues(r.Agent, string(r.Outcome)).Inc()
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
type WorkQueue func(ctx context.Context) (*core.WorkCounts, error)

// queueCollector asks the store at scrape time: the figures are the database's, so
// every replica reports the same and none keeps a count that drifts.
type queueCollector struct {
	read                             WorkQueue
	workspaces, messages, busy, deep *prometheus.Desc
}

// WatchWorkQueue adds wshub_workspaces{state} and the open-message gauges, read at
// scrape. Queue depth is reported per hub rather than per workspace (a label per
// workspace id would grow without bound): the total, how many workspaces have any,
// and the deepest.
func (m *Metrics) WatchWorkQueue(read WorkQueue) {
	m.reg.MustRegister(&queueCollector{read: read,
		workspaces: prometheus.NewDesc("wshub_workspaces", "Workspaces by state (deleted ones left out).", []string{"state"}, nil),
		messages:   prometheus.NewDesc("wshub_messages_open", "User messages pending or in a turn, over all workspaces.", nil, nil),
		busy:       prometheus.NewDesc("wshub_workspaces_with_open_messages", "Workspaces with at least one user message pending or in a turn.", nil, nil),
		deep:       prometheus.NewDesc("wshub_workspace_queue_depth_max", "The most user messages pending or in a turn in any one workspace.", nil, nil),
	})
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.workspaces
	ch <- c.messages
	ch <- c.busy
	ch <- c.deep
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w, err := c.read(ctx)
	if err != nil {
		// Fail open: the scrape goes on without these figures.
		ch <- prometheus.NewInvalidMetric(c.workspaces, err)
		return
	}
	for state, n := range w.ByState {
		ch <- prometheus.MustNewConstMetric(c.workspaces, prometheus.GaugeValue, float64(n), state)
	}
	ch <- prometheus.MustNewConstMetric(c.messages, prometheus.GaugeValue, float64(w.OpenMessages))
	ch <- prometheus.MustNewConstMetric(c.busy, prometheus.GaugeValue, float64(w.BusyWorkspaces))
	ch <- prometheus.MustNewConstMetric(c.deep, prometheus.GaugeValue, float64(w.DeepestQueue))
}
