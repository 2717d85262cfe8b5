// Package webhooks_test runs a real hub's outbox: webhook deliveries and their log,
// chat replies under leases, the store going away mid-turn, resealing, retention, and
// pull requests on GitHub and a real Gitea.
package webhooks_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/webhook"
)

// deliveries reads the operator view of an account's deliveries.
func deliveries(t *testing.T, h *hubtest.Hub, accountID string) []*core.Delivery {
	t.Helper()
	ds, err := h.Service.Admin.ListDeliveries(context.Background(), accountID, "", 100)
	if err != nil {
		t.Fatalf("list deliveries: %v", err)
	}
	return ds
}

// settle waits until the delivery is no longer leased and returns it.
func settled(t *testing.T, h *hubtest.Hub, accountID string, attempts int) *core.Delivery {
	t.Helper()
	return eventually.Value(t, 20*time.Second, fmt.Sprintf("one delivery with %d attempts recorded", attempts), func() (*core.Delivery, error) {
		ds := deliveries(t, h, accountID)
		if len(ds) == 1 && ds[0].Attempts >= attempts {
			return ds[0], nil
		}
		return nil, fmt.Errorf("got %+v", ds)
	})
}

// quiet asserts no new request arrives at rc for a few delivery polls.
func quiet(t *testing.T, rc *hubtest.Receiver, have int, why string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond) // sleep: six of the deliverer's 50 ms polls; no event marks a poll that found nothing due
	if got := len(rc.Received()); got != have {
		t.Fatalf("%s: expected %d requests, got %d", why, have, got)
	}
}

func TestWebhookIsSignedAndCarriesTheTurn(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	_, secret := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	id := hubtest.CreateWorkspace(t, h, "write hello")
	ws := hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	got := rc.Wait(t, 1)[0]

	if err := webhook.Verify(got.Body, got.Header.Get(webhook.HeaderSignature), secret); err != nil {
		t.Fatalf("expected the signature to verify with the endpoint's secret, got %v", err)
	}
	other := "whsec_" + strings.Repeat("A", 43)
	if err := webhook.Verify(got.Body, got.Header.Get(webhook.HeaderSignature), other); err == nil {
		t.Fatalf("expected the signature to fail with another secret")
	}
	msgs, _ := hubtest.Messages(t, h, id)
	reply := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Body["messages"].([]any)[1].(map[string]any)
	ev := got.Event
	want := webhook.Event{
		EventID: core.EventIDFor(id, msgs[1].TurnID), Type: "workspace.turn.completed", CreatedAt: int64(reply["createdAt"].(float64)),
		WorkspaceID: id, Branch: ws["branch"].(string), TurnID: msgs[1].TurnID, Outcome: "completed",
		Reply: webhook.Reply{Text: "wrote hello.txt", Truncated: false}, MessageID: reply["messageId"].(string),
		// Extension: the turn's commit (the workspace's head); no push, so no pushed.
		HeadCommit: ws["headCommit"].(string),
		// Extension: where the workspace was started from, and by whom (below).
		Origin: webhook.OriginAPI,
	}
	startedBy(t, ev, ws)
	want.StartedBy = ev.StartedBy
	if ev != want {
		t.Fatalf("expected event %+v, got %+v", want, ev)
	}
	headers := map[string]string{
		"Service-Event-Id": want.EventID, "Service-Delivery-Attempt": "1", "User-Agent": "service-webhooks/1",
		"Content-Type": "application/json",
	}
	for k, v := range headers {
		if got.Header.Get(k) != v {
			t.Fatalf("expected header %s: %q, got %q", k, v, got.Header.Get(k))
		}
	}
	d := settled(t, h, h.Account.ID, 1)
	if d.Status != core.DeliveryDelivered || d.LastStatusCode != 200 || d.DeliveredAt == nil || d.EventID != want.EventID {
		t.Fatalf("expected the delivery recorded delivered with 200, got %+v", d)
	}
	var stored []byte // the event body carries the reply: sealed at rest like message text
	if err := h.PG().DB().Get(&stored, `SELECT body_sealed FROM events WHERE id = $1`, want.EventID); err != nil ||
		strings.Contains(string(stored), "wrote hello") || strings.Contains(string(stored), want.MessageID) {
		t.Fatalf("expected the stored event body sealed, got %q (%v)", stored, err)
	}
}

// startedBy checks the event names who started the workspace as its status does.
func startedBy(t *testing.T, ev webhook.Event, ws map[string]any) {
	t.Helper()
	by, _ := ws["startedBy"].(map[string]any)
	if ev.StartedBy == nil || by == nil || ev.StartedBy.Kind != by["kind"] || ev.StartedBy.ID != by["id"] || ev.StartedBy.Name != by["name"] {
		t.Fatalf("expected the event started by %v, as the workspace says, got %+v", by, ev.StartedBy)
	}
}

// A schedule's run: the delivery, parsed by the public package, names the schedule as
// the workspace's origin and who started it.
func TestWebhookNamesTheScheduleThatStartedTheWorkspace(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	_, secret := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	sc := h.Call("POST", "/v1/api/schedules", h.Key, map[string]any{"name": "hello daily", "projectId": h.Project.ID,
		"agent": "agent_1", "model": "test-model", "prompt": "write hello", "cron": "@daily"}).Expect(t, 201, "")
	id := sc.Body["schedule"].(map[string]any)["scheduleId"].(string)
	run := h.Call("POST", "/v1/api/schedules/"+id+"/run", h.Key, nil).Expect(t, 200, "")
	wsID, _ := run.Body["run"].(map[string]any)["workspaceId"].(string)
	ws := hubtest.WaitFor(t, h, wsID, "idle after one turn", hubtest.IdleAfterTurns(1))
	got := rc.Wait(t, 1)[0]

	ev, err := webhook.ConstructEvent(got.Body, got.Header.Get(webhook.HeaderSignature), secret)
	if err != nil {
		t.Fatal(err)
	}
	want := webhook.Author{Kind: "schedule", ID: id, Name: "hello daily"}
	if ev.WorkspaceID != wsID || ev.Origin != webhook.OriginSchedule || ev.StartedBy == nil || *ev.StartedBy != want {
		t.Fatalf("expected workspace %s's event from the schedule, started by %+v, got %+v", wsID, want, ev)
	}
	startedBy(t, ev, ws)
}

func TestWebhookReplyTruncationIsMarked(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "big")
	ev := rc.Wait(t, 1)[0].Event
	if !ev.Reply.Truncated || len([]rune(ev.Reply.Text)) != core.MaxReplyChars {
		t.Fatalf("expected a truncated reply of %d characters, got truncated=%v and %d", core.MaxReplyChars, ev.Reply.Truncated, len(ev.Reply.Text))
	}
}

// Failed attempts are retried with the same event on the backoff schedule, driven by
// the injected clock: attempt n+1 is due exactly RetryDelay(n) after attempt n.
func TestWebhookRetriesOnTheBackoffSchedule(t *testing.T) {
	t.Parallel()
	failures := map[string]func(w http.ResponseWriter){
		"500":      func(w http.ResponseWriter) { w.WriteHeader(500) },
		"302":      func(w http.ResponseWriter) { w.Header().Set("Location", "/elsewhere"); w.WriteHeader(302) },
		"timeout":  func(w http.ResponseWriter) { time.Sleep(time.Second); w.WriteHeader(200) }, // sleep: a receiver slower than the attempt's timeout
		"no-reply": func(w http.ResponseWriter) { panic(http.ErrAbortHandler) },
	}
	wantErr := map[string]string{"500": "HTTP 500", "302": "redirect", "timeout": "timed out", "no-reply": ""}
	for name, fail := range failures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := hubtest.NewClock()
			h := hubtest.StartDelivering(t, hubtest.WithClock(clock), hubtest.WithConfig(func(c *hub.Config) { c.WebhookTimeout = 300 * time.Millisecond }))
			const failing = 3
			rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
				if r.Attempt() <= failing {
					fail(w)
					return
				}
				w.WriteHeader(204)
			})
			hubtest.AddWebhook(t, h, h.Key, rc.URL)
			hubtest.CreateWorkspace(t, h, "hello")
			rc.Wait(t, 1)
			for n := 1; n <= failing; n++ {
				d := settled(t, h, h.Account.ID, n)
				if d.Status != core.DeliveryPending || !strings.Contains(d.LastError, wantErr[name]) || d.LastAttemptAt == nil {
					t.Fatalf("after failed attempt %d: expected pending with error %q, got %+v", n, wantErr[name], d)
				}
				if due := d.LastAttemptAt.Add(core.RetryDelay(n)); !d.NextAttemptAt.Equal(due) {
					t.Fatalf("after attempt %d: expected the next attempt at +%s (%s), got %s", n, core.RetryDelay(n), due, d.NextAttemptAt)
				}
				clock.Advance(d.NextAttemptAt.Sub(clock.Now()) - time.Second)
				quiet(t, rc, n, "one second before the retry is due")
				clock.Advance(time.Second)
				rc.Wait(t, n+1)
			}
			d := settled(t, h, h.Account.ID, failing+1)
			if d.Status != core.DeliveryDelivered || d.LastStatusCode != 204 || d.LastError != "" {
				t.Fatalf("expected delivered on attempt %d, got %+v", failing+1, d)
			}
			got := rc.Received()
			for i, r := range got {
				if r.Attempt() != i+1 || r.Event.EventID != got[0].Event.EventID || string(r.Body) != string(got[0].Body) {
					t.Fatalf("request %d: expected attempt %d of event %s with the same body, got attempt %d of %s",
						i, i+1, got[0].Event.EventID, r.Attempt(), r.Event.EventID)
				}
			}
			if len(got) != failing+1 {
				t.Fatalf("expected %d requests, got %d", failing+1, len(got))
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{1: 30 * time.Second, 2: time.Minute, 3: 2 * time.Minute, 7: 32 * time.Minute,
		8: time.Hour, 19: time.Hour, 60: time.Hour}
	for n, d := range want {
		if got := core.RetryDelay(n); got != d {
			t.Fatalf("RetryDelay(%d): expected %s, got %s", n, d, got)
		}
	}
}

// The 20th failed attempt gives the delivery up; an operator's redeliver sends it once more.
func TestWebhookGivesUpAfterTwentyAttemptsAndRedeliverSendsAgain(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.StartDelivering(t, hubtest.WithClock(clock))
	healthy := make(chan struct{})
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		select {
		case <-healthy:
			w.WriteHeader(200)
		default:
			w.WriteHeader(503)
		}
	})
	hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "hello")
	for n := 1; n <= core.MaxDeliveryAttempts; n++ {
		rc.Wait(t, n)
		d := settled(t, h, h.Account.ID, n)
		clock.Advance(d.NextAttemptAt.Sub(clock.Now()))
	}
	d := settled(t, h, h.Account.ID, core.MaxDeliveryAttempts)
	if d.Status != core.DeliveryFailed || d.LastStatusCode != 503 || d.LastError != "HTTP 503" {
		t.Fatalf("expected the delivery given up with its last error, got %+v", d)
	}
	clock.Advance(2 * time.Hour)
	quiet(t, rc, core.MaxDeliveryAttempts, "after giving up")

	close(healthy)
	if _, err := h.Service.Admin.Redeliver(context.Background(), d.ID); err != nil {
		t.Fatalf("redeliver: %v", err)
	}
	got := rc.Wait(t, core.MaxDeliveryAttempts+1)
	if a := got[len(got)-1].Attempt(); a != core.MaxDeliveryAttempts+1 {
		t.Fatalf("expected the redelivery to be attempt %d, got %d", core.MaxDeliveryAttempts+1, a)
	}
	if d := settled(t, h, h.Account.ID, core.MaxDeliveryAttempts+1); d.Status != core.DeliveryDelivered {
		t.Fatalf("expected delivered after the redelivery, got %+v", d)
	}
}

// Deleting an endpoint removes its pending deliveries, and an attempt in flight at
// that moment is not retried.
func TestDeletingAnEndpointCancelsItsDeliveries(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.StartDelivering(t, hubtest.WithClock(clock))
	inFlight, release := make(chan struct{}), make(chan struct{})
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		if r.Attempt() == 2 {
			close(inFlight)
			<-release
		}
		w.WriteHeader(500)
	})
	whID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "hello")
	rc.Wait(t, 1)
	d := settled(t, h, h.Account.ID, 1)
	clock.Advance(d.NextAttemptAt.Sub(clock.Now()))
	<-inFlight
	h.Call("DELETE", "/v1/api/webhooks/"+whID, h.Key, nil).Expect(t, 200, "")
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1`, whID); err != nil || n != 0 {
		t.Fatalf("expected the endpoint's deliveries deleted with it, got %d (%v)", n, err)
	}
	close(release)
	clock.Advance(2 * time.Hour)
	quiet(t, rc, 2, "after the endpoint was deleted")
}

// Only endpoints registered before a turn finished receive it; other accounts' turns
// never reach an account's endpoints.
func TestWebhookAudienceIsFixedWhenTheTurnFinishes(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	early, late, stranger := hubtest.NewReceiver(t, nil), hubtest.NewReceiver(t, nil), hubtest.NewReceiver(t, nil)
	hubtest.AddWebhook(t, h, h.Key, early.URL)
	otherAcct, otherKey := h.NewAccount(true)
	hubtest.AddWebhook(t, h, otherKey, stranger.URL)

	id := hubtest.CreateWorkspace(t, h, "first")
	hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	first := early.Wait(t, 1)[0].Event.EventID
	hubtest.AddWebhook(t, h, h.Key, late.URL)
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "second"}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	second := early.Wait(t, 2)[1].Event.EventID
	lateGot := late.Wait(t, 1)
	if len(lateGot) != 1 || lateGot[0].Event.EventID != second || second == first {
		t.Fatalf("expected the late endpoint to get only the second event %s (not %s), got %d requests", second, first, len(lateGot))
	}
	quiet(t, stranger, 0, "another account's endpoint")
	if ds := deliveries(t, h, otherAcct.ID); len(ds) != 0 {
		t.Fatalf("expected no deliveries on the other account, got %+v", ds)
	}
	if ds := deliveries(t, h, h.Account.ID); len(ds) != 3 {
		t.Fatalf("expected 3 deliveries (2 early, 1 late), got %d", len(ds))
	}
}

func TestDeliveryMetrics(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.AddWebhook(t, h, h.Key, rc.URL+"?second")
	hubtest.CreateWorkspace(t, h, "hello")
	rc.Wait(t, 2)
	// The receiver has the bodies before the hub records the attempts: wait for every
	// figure (a minute at most, for a busy machine), then check none went past.
	wants := []string{"wshub_webhook_attempts_total 2", "wshub_webhook_deliveries_succeeded_total 2",
		"wshub_webhook_attempts_failed_total 0", "wshub_webhook_deliveries_given_up_total 0",
		"wshub_webhook_delivery_latency_seconds_count 2", "wshub_webhook_attempt_duration_seconds_count 2"}
	missing := func(text string) string {
		for _, want := range wants {
			if !strings.Contains(text, want+"\n") {
				return want
			}
		}
		return ""
	}
	eventually.NoError(t, time.Minute, "every wanted line in /metrics", func() error {
		resp, err := http.Get(h.MetricsURL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := missing(string(b)); want != "" {
			return fmt.Errorf("no %q in:\n%s", want, grepLines(string(b), "wshub_"))
		}
		return nil
	})
	if n := len(rc.Received()); n != 2 {
		t.Fatalf("expected 2 deliveries received, got %d", n)
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
