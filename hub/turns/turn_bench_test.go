package turns_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// BenchmarkTurnRoundTrip measures one serial turn of a trivial agent, from the send's
// answer to the reply recorded in the database, on the local provider (the turn runs
// in the hub) and on the process provider (it runs in a `wshub runtime` process and
// crosses the runtime API: long poll, report). The difference is the price of the
// process boundary. The percentiles are the figure; ns/op includes the API call.
func BenchmarkTurnRoundTrip(b *testing.B) {
	for _, provider := range []string{"local", "process"} {
		b.Run(provider, func(b *testing.B) {
			h := hubtest.Start(b, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(b)), hubtest.WithProcessProvider(b))
			id := hubtest.CreateOn(b, h, provider, "")
			hubtest.WaitFor(b, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["runtimeState"] == "online" })
			var ms []float64
			for i := 0; b.Loop(); i++ {
				h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": fmt.Sprintf("turn %d", i)}).Expect(b, 200, "")
				start := time.Now()
				eventually.Eventually(b, time.Minute, fmt.Sprintf("turn %d recorded", i), func() bool {
					var seq int64
					if err := h.PG().DB().Get(&seq, `SELECT latest_seq FROM workspaces WHERE id = $1`, id); err != nil {
						b.Fatal(err)
					}
					return seq == int64(2*(i+1))
				})
				ms = append(ms, float64(time.Since(start))/float64(time.Millisecond))
			}
			slices.Sort(ms)
			pct := func(p float64) float64 { return ms[max(0, int(math.Ceil(p*float64(len(ms))))-1)] }
			b.ReportMetric(pct(0.50), "ms-p50")
			b.ReportMetric(pct(0.99), "ms-p99")
			// The hub's own figure, free of the poll's steps (which grow by half each): from
			// the send's message to the reply's, as the hub stamped them.
			var rec []float64
			if err := h.PG().DB().Select(&rec, `SELECT extract(epoch FROM a.created_at - u.created_at) * 1000
				FROM messages u JOIN messages a ON a.workspace_id = u.workspace_id AND a.turn_id = u.turn_id AND a.role = 'assistant'
				WHERE u.workspace_id = $1 AND u.role = 'user' ORDER BY 1`, id); err != nil {
				b.Fatal(err)
			}
			if len(rec) >= 4 {
				// The stamps are in whole milliseconds: the mean of the middle half shows
				// what is less.
				mid := rec[len(rec)/4 : len(rec)-len(rec)/4]
				sum := 0.0
				for _, v := range mid {
					sum += v
				}
				b.ReportMetric(rec[len(rec)/2], "ms-recorded-p50")
				b.ReportMetric(sum/float64(len(mid)), "ms-recorded-iqm")
			}
		})
	}
}

// BenchmarkEventToStream measures how long an agent's step takes to reach an SSE
// client: from the hub reading the event off the agent (its createdAt) to the client
// parsing it, through the batching (at most 100 ms), the insert, NOTIFY and the
// stream. One op is one turn of 5 steps (11 events with text and turn_finished).
func BenchmarkEventToStream(b *testing.B) {
	h := hubtest.Start(b, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(b)))
	id := hubtest.CreateOn(b, h, "local", "")
	hubtest.WaitFor(b, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
	events, drop := hubtest.StreamB(b, h, id)
	defer drop()
	var ms []float64
	for b.Loop() {
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "steps 5"}).Expect(b, 200, "")
		for {
			e := <-events
			ms = append(ms, float64(time.Since(time.UnixMilli(e.CreatedAt)))/float64(time.Millisecond))
			if e.Type == "turn_finished" {
				break
			}
		}
	}
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[max(0, int(math.Ceil(p*float64(len(ms))))-1)] }
	b.ReportMetric(pct(0.50), "ms-p50")
	b.ReportMetric(pct(0.99), "ms-p99")
}
