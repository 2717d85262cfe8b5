package webhooks_test

// Benchmarks for the two webhook figures: how many deliveries per second the delivery
// pipeline manages, and how long a finished turn takes to reach a receiver. Like the
// tests they need DATABASE_URL (make bench, or DATABASE_URL=$(bash scripts/pg.sh)).
// Everything runs on one machine: the hub, PostgreSQL, the fake agent and the
// receivers share its CPUs, so the figures are for comparison, not capacity planning.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/jobs"
)

// benchHub runs a hub with its workers, agent_1 bound to the fake agent, and webhooks
// allowed to reach loopback receivers over http; edit changes the rest.
func benchHub(b *testing.B, edit func(*hub.Config)) *hubtest.Hub {
	b.Helper()
	return hubtest.Start(b, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(b)),
		hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure = true; edit(c) }))
}

// ackCounter is a jobs.DeliveryObserver that counts acknowledged attempts and closes
// done when the want-th has been settled.
type ackCounter struct {
	n, want, unexpected atomic.Int64
	done                chan struct{}
}

func (a *ackCounter) ObserveDelivery(r core.DeliveryReport, _ time.Duration) {
	if r.Outcome != core.DeliveryAcknowledged {
		a.unexpected.Add(1)
		return
	}
	if a.n.Add(1) == a.want.Load() {
		close(a.done)
	}
}

// BenchmarkWebhookDeliveryThroughput measures the delivery pipeline alone: claim due
// deliveries (FOR UPDATE SKIP LOCKED, lease), open the sealed body and secret, sign,
// POST to a loopback receiver answering 200, settle under the lease. One op is one
// batch of every delivery (benchEvents turns x benchEndpoints endpoints), all due when
// a fresh jobs.Deliveries starts; the figure is deliveries/s (ns/op is per batch).
//
// Not measured: running turns and writing the outbox (done once, before timing, with
// the hub's own delivery worker off), NOTIFY, TLS, DNS and the SSRF dial check
// (insecure mode admits http to loopback and skips it), network latency, retries.
// Between ops the same rows are made due again by SQL, outside the timer.
func BenchmarkWebhookDeliveryThroughput(b *testing.B) {
	const workspaces, turns, endpoints = 8, 25, 3 // 200 events, 600 deliveries per op
	h := benchHub(b, func(c *hub.Config) {
		c.WebhookConcurrency = 0 // no delivery worker on the hub: deliveries stay pending
		c.MaxActiveWorkspaces = workspaces
	})
	for range endpoints {
		rc := hubtest.NewReceiver(b, nil)
		h.Call("POST", "/v1/api/webhooks", h.Key, map[string]any{"url": rc.URL}).Expect(b, 201, "")
	}
	var ids []string
	for w := range workspaces {
		id := hubtest.CreateWorkspace(b, h, fmt.Sprintf("hello %d.0", w))
		for j := 1; j < turns; j++ {
			h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": fmt.Sprintf("hello %d.%d", w, j)}).Expect(b, 200, "")
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		hubtest.WaitFor(b, h, id, "idle after its turns", hubtest.IdleAfterTurns(turns))
	}
	db := h.PG().DB()
	count := func(status string) int {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE status = $1`, status); err != nil {
			b.Fatal(err)
		}
		return n
	}
	const total = workspaces * turns * endpoints
	if n := count("pending"); n != total {
		b.Fatalf("expected %d pending deliveries after the turns, got %d", total, n)
	}

	for _, concurrency := range []int{1, 16} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				if _, err := db.Exec(`UPDATE webhook_deliveries SET status = 'pending', attempts = 0,
					next_attempt_at = created_at, lease_token = NULL, lease_expires_at = NULL, last_status_code = NULL,
					last_error = '', last_attempt_at = NULL, delivered_at = NULL`); err != nil {
					b.Fatal(err)
				}
				// The log goes with the count it numbers: a delivery set back to no
				// attempts has none logged.
				if _, err := db.Exec(`DELETE FROM webhook_delivery_attempts`); err != nil {
					b.Fatal(err)
				}
				if _, err := db.Exec(`VACUUM webhook_deliveries`); err != nil { // keep later ops as lean as the first
					b.Fatal(err)
				}
				acks := &ackCounter{done: make(chan struct{})}
				acks.want.Store(total)
				ctx, cancel := context.WithCancel(context.Background())
				stopped := make(chan struct{})
				d := &jobs.Deliveries{Core: h.Service.Deliveries, Observer: acks, Concurrency: concurrency, Poll: 10 * time.Millisecond}
				b.StartTimer()
				go func() { defer close(stopped); d.Run(ctx) }()
				select {
				case <-acks.done:
				case <-time.After(2 * time.Minute):
					b.Fatalf("only %d of %d deliveries acknowledged within 2 minutes", acks.n.Load(), total)
				}
				b.StopTimer()
				cancel()
				<-stopped
				if n, bad := count("delivered"), acks.unexpected.Load(); n != total || bad != 0 {
					b.Fatalf("expected %d delivered and no other outcome, got %d delivered and %d others", total, n, bad)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// BenchmarkTurnToAcknowledged measures, on a hub configured as in production (delivery
// worker on with 16 slots, woken by NOTIFY, 1 s backstop poll), the time from a turn
// finishing to its event arriving at the one registered receiver: Received.At minus
// the body's createdAt. One op is one turn (send a message, wait for its delivery), so
// ns/op also counts the API call, the agent and the test's own waiting; the latency
// percentiles are the figure (ms-p50, ms-p90, ms-p99, ms-max over the op's b.N turns).
//
// createdAt is the hub's clock when the turn's transaction records it (before the
// commit), truncated to the millisecond: each sample reads 0 to 1 ms high (0.5 ms on
// average). The latency covers the commit, NOTIFY, claim, open, sign and the HTTP
// round trip up to the receiver reading the body, not the settle after the 200.
func BenchmarkTurnToAcknowledged(b *testing.B) {
	h := benchHub(b, func(c *hub.Config) { c.WebhookPoll = time.Second })
	rc := hubtest.NewReceiver(b, nil)
	h.Call("POST", "/v1/api/webhooks", h.Key, map[string]any{"url": rc.URL}).Expect(b, 201, "")
	id := hubtest.CreateWorkspace(b, h, "") // provisioned before timing; every timed turn is a plain one
	hubtest.WaitFor(b, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })

	var ms []float64
	for i := 0; b.Loop(); i++ {
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": fmt.Sprintf("turn %d", i)}).Expect(b, 200, "")
		got := rc.Wait(b, i+1)[i]
		ms = append(ms, float64(got.At.Sub(time.UnixMilli(got.Event.CreatedAt)))/float64(time.Millisecond))
	}
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[max(0, int(math.Ceil(p*float64(len(ms))))-1)] } // nearest rank
	b.ReportMetric(pct(0.50), "ms-p50")
	b.ReportMetric(pct(0.90), "ms-p90")
	b.ReportMetric(pct(0.99), "ms-p99")
	b.ReportMetric(ms[len(ms)-1], "ms-max")
}
