package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/webhook"
)

// deliveryFixture is a database with an account, key, project and endpoints, ready
// for real `wshub serve` processes.
type deliveryFixture struct {
	env       []string // the hub processes' settings
	admin     environ  // in-process `wshub admin` on the same database
	account   string
	key       string
	receivers []*hubtest.Receiver
	secrets   []string
}

func newDeliveryFixture(t *testing.T, endpoints int) *deliveryFixture {
	t.Helper()
	dataDir := t.TempDir()
	agent := filepath.Join(dataDir, "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\nprompt=$(cat)\necho \"echo: $prompt\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	db, contentKey := pgtest.NewDatabase(t), hubtest.NewContentKey(t)
	f := &deliveryFixture{env: []string{
		"DATABASE_URL=" + db, "WSHUB_DATA_DIR=" + dataDir, "WSHUB_CONTENT_KEY=" + contentKey,
		"WSHUB_AGENT_1_COMMAND=" + agent, "WSHUB_WEBHOOK_ALLOW_INSECURE=true", "WSHUB_LEASE_FOR=2s",
		"WSHUB_WEBHOOK_LEASE_FOR=11s", "WSHUB_WORKER_POLL=200ms", "WSHUB_WEBHOOK_POLL=200ms",
		"WSHUB_MAX_ACTIVE_WORKSPACES=8",
		"WSHUB_API_RATE=0", // a thousand messages in a burst: the deliveries are measured, not the limit
	}}
	f.admin = testEnviron(f.env...)
	acct, _ := wshub(t, f.admin, 0, "admin", "account", "create", "--name", "hooks", "--entitled", "--metered=false")
	key, _ := wshub(t, f.admin, 0, "admin", "key", "create", "--account", acct["accountId"].(string), "--name", "k")
	wshub(t, f.admin, 0, "admin", "project", "add", "--account", acct["accountId"].(string), "--repository", hubtest.GitRepo(t))
	f.key, f.account = key["key"].(string), acct["accountId"].(string)
	return f
}

// register adds the endpoints through a hub's API.
func (f *deliveryFixture) register(t *testing.T, base string, n int, respond func(http.ResponseWriter, hubtest.Received)) {
	t.Helper()
	for i := 0; i < n; i++ {
		rc := hubtest.NewReceiver(t, respond)
		r := call(t, "POST", base+"/v1/api/webhooks", f.key, map[string]any{"url": rc.URL})
		f.receivers = append(f.receivers, rc)
		f.secrets = append(f.secrets, r["secret"].(string))
	}
}

// send queues turns: perWorkspace messages in each of workspaces workspaces.
func (f *deliveryFixture) send(t *testing.T, base string, workspaces, perWorkspace int) {
	t.Helper()
	var wg sync.WaitGroup
	for w := 0; w < workspaces; w++ {
		ws := call(t, "POST", base+"/v1/api/workspaces", f.key, map[string]any{"agent": "agent_1", "model": "m"})["workspace"].(map[string]any)
		id := ws["workspaceId"].(string)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := 0; m < perWorkspace; m++ {
				call(t, "POST", base+"/v1/api/workspaces/"+id+"/messages", f.key, map[string]any{"text": fmt.Sprintf("m%d", m)})
			}
		}()
	}
	wg.Wait()
}

// tally checks every receiver got every one of want events at least once, with valid
// signatures, and returns the duplicate count and turn-finished-to-ack latencies.
func (f *deliveryFixture) tally(t *testing.T, want int, within time.Duration) (dups int, latencies []time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for i, rc := range f.receivers {
		eventually.NoError(t, time.Until(deadline), fmt.Sprintf("endpoint %d: %d distinct events", i, want), func() error {
			seen := map[string]bool{}
			for _, r := range rc.Received() {
				seen[r.Event.EventID] = true
			}
			if len(seen) != want {
				return fmt.Errorf("got %d", len(seen))
			}
			return nil
		})
		seen := map[string]bool{}
		for _, r := range rc.Received() {
			if err := webhook.VerifyAt(r.Body, r.Header.Get(webhook.HeaderSignature), f.secrets[i], r.At, webhook.DefaultTolerance); err != nil {
				t.Fatalf("endpoint %d: signature does not verify: %v", i, err)
			}
			if seen[r.Event.EventID] {
				dups++
				continue
			}
			seen[r.Event.EventID] = true
			latencies = append(latencies, r.At.Sub(time.UnixMilli(r.Event.CreatedAt)))
		}
	}
	return dups, latencies
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// TestWebhooksSurviveSIGKILL: 300 turn events to 3 endpoints; the hub is killed with
// SIGKILL mid-way and restarted. Every (endpoint, event) pair must arrive; duplicates
// can only be attempts that were in flight at the kill. (300 keeps the 16 attempts in
// flight at the kill, at a third of the way, that the case is about; `make soak` runs
// the large volumes, killed several times.)
func TestWebhooksSurviveSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const endpoints, workspaces, perWorkspace, concurrency = 3, 10, 30, 16
	bin := buildBinary(t)
	f := newDeliveryFixture(t, endpoints)
	env := append(f.env, fmt.Sprintf("WSHUB_WEBHOOK_CONCURRENCY=%d", concurrency))
	p := startHub(t, bin, env)
	f.register(t, p.base, endpoints, func(w http.ResponseWriter, _ hubtest.Received) {
		time.Sleep(2 * time.Millisecond) // sleep: a receiver doing a little work, so attempts are in flight at the kill
		w.WriteHeader(200)
	})
	start := time.Now()
	f.send(t, p.base, workspaces, perWorkspace)
	total := endpoints * workspaces * perWorkspace
	eventually.Eventually(t, 2*time.Minute, "a third of the deliveries", func() bool {
		return len(f.receivers[0].Received())+len(f.receivers[1].Received())+len(f.receivers[2].Received()) >= total/3
	})
	p.kill(t)
	before := 0
	for _, rc := range f.receivers {
		before += len(rc.Received())
	}
	startHub(t, bin, env) // the restarted hub drains the backlog; its cleanup stops it
	dups, lat := f.tally(t, workspaces*perWorkspace, 3*time.Minute)
	t.Logf("SIGKILL after %d of %d deliveries; all %d (endpoint, event) pairs arrived in %s; %d duplicates (bound: %d attempts in flight); latency p50 %s p99 %s (includes the restart)",
		before, total, total, time.Since(start).Round(time.Millisecond), dups, concurrency, percentile(lat, .5), percentile(lat, .99))
	if dups > concurrency {
		t.Fatalf("expected at most %d duplicates (attempts in flight at the kill), got %d", concurrency, dups)
	}
	// The restarted hub settles what it delivered; give the last settlements a moment.
	eventually.NoError(t, 30*time.Second, "no pending deliveries left", func() error {
		_, out := wshub(t, f.admin, 0, "admin", "webhook", "deliveries", "--account", f.account, "--status", "pending", "--limit", "10")
		if strings.Contains(out, "deliveryId") {
			return fmt.Errorf("got %s", out)
		}
		return nil
	})
	_, out := wshub(t, f.admin, 0, "admin", "webhook", "deliveries", "--account", f.account, "--status", "delivered", "--limit", "10000")
	if n := strings.Count(out, `"deliveryId"`); n != total {
		t.Fatalf("expected %d delivered deliveries in the operator view, got %d", total, n)
	}
}

// TestTwoHubsDeliverEachEventOnce runs two `wshub serve` processes on one database:
// in steady state (no crash) each (endpoint, event) pair is delivered exactly once.
func TestTwoHubsDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const endpoints, workspaces, perWorkspace = 2, 8, 20
	bin := buildBinary(t)
	f := newDeliveryFixture(t, endpoints)
	a, b := startHub(t, bin, f.env), startHub(t, bin, f.env)
	f.register(t, a.base, endpoints, nil)
	start := time.Now()
	f.send(t, b.base, workspaces, perWorkspace)
	dups, lat := f.tally(t, workspaces*perWorkspace, 2*time.Minute)
	took := time.Since(start)
	t.Logf("two hubs: %d deliveries in %s (turns included), %d duplicates; turn finished -> acknowledged p50 %s p99 %s",
		endpoints*workspaces*perWorkspace, took.Round(time.Millisecond), dups, percentile(lat, .5), percentile(lat, .99))
	if dups != 0 {
		t.Fatalf("expected each event delivered once per endpoint, got %d duplicates", dups)
	}
}
