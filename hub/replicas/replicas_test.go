// Package replicas_test runs several hubs on one database: workspaces served by
// either, blobs shared without a shared disk, hosts and their local workspaces,
// mirrors, project removal, and Kubernetes workspaces.
package replicas_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// Two hub processes on one database, both serving and both running every worker:
// every turn is recorded once, every webhook event reaches the receiver, and each cron
// tick runs on one replica only. Workspaces run on both providers: local turns are
// claimed by either hub's worker, remote runtimes talk to the hub that started them.
func TestTwoReplicasShareTheWork(t *testing.T) {
	t.Parallel()
	a := hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) {
		c.WebhookAllowInsecure = true
		c.WebhookPoll = 50 * time.Millisecond
	}))
	b := a.Replica(t)
	rc := hubtest.NewReceiver(t, nil)
	hubtest.AddWebhook(t, a, a.Key, rc.URL)

	hubs := []*hubtest.Hub{a, b}
	const perProvider, sends = 3, 3
	var ids []string
	for i := 0; i < 2*perProvider; i++ {
		provider := []string{"local", "process"}[i%2]
		ids = append(ids, hubtest.CreateOn(t, hubs[i%2], provider, fmt.Sprintf("hello %d", i)))
	}
	for round := 0; round < sends; round++ {
		for i, id := range ids {
			hubtest.Send(t, hubs[(i+round)%2], id, fmt.Sprintf("round %d", round))
		}
	}
	turns := 0
	for _, id := range ids {
		hubtest.WaitFor(t, a, id, "idle after every turn", hubtest.IdleAfterTurns(1+sends))
		got := hubtest.Replies(t, b, id)
		if len(got) != 1+sends {
			t.Fatalf("%s: expected %d replies, one per turn, got %q", id, 1+sends, got)
		}
		for r := 0; r < sends; r++ {
			if want := fmt.Sprintf("completed: echo: round %d", r); got[1+r] != want {
				t.Fatalf("%s: expected reply %d %q, got %q", id, 1+r, want, got[1+r])
			}
		}
		turns += len(got)
	}
	seen := map[string]bool{}
	eventually.Within(time.Minute, func() bool {
		for _, r := range rc.Received() {
			seen[r.Event.EventID] = true
		}
		return len(seen) >= turns
	})
	if len(seen) != turns {
		t.Fatalf("expected every one of %d turns' events delivered, got %d", turns, len(seen))
	}

	// A cron tick runs on one replica: the other finds it taken.
	tick := time.Now().Truncate(time.Minute).Add(time.Hour)
	ran := 0
	for _, h := range hubs {
		if _, err := h.Service.Sweeps.SweepRuntimes(context.Background(), core.RuntimeSweepConfig{OfflineAfter: time.Hour, StartTimeout: time.Hour}, tick); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := h.PG().DB().Get(&n, `SELECT count(*) FROM cron_runs WHERE job = 'runtimes' AND tick = $1`, tick); err != nil {
			t.Fatal(err)
		}
		ran = n
	}
	if ran != 1 {
		t.Fatalf("expected the tick recorded once, got %d", ran)
	}
}
