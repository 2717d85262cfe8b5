package webhooks_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// deliveryLog reads a page of an endpoint's delivery log through the API.
func deliveryLog(t *testing.T, h *hubtest.Hub, key, whID, query string) (deliveries []map[string]any, next string) {
	t.Helper()
	r := h.Call("GET", "/v1/api/webhooks/"+whID+"/deliveries"+query, key, nil).Expect(t, 200, "")
	for _, d := range r.Body["deliveries"].([]any) {
		deliveries = append(deliveries, d.(map[string]any))
	}
	next, _ = r.Body["nextBefore"].(string)
	return deliveries, next
}

// logAttempts waits until the endpoint's only delivery shows n attempts, and returns it.
func logAttempts(t *testing.T, h *hubtest.Hub, whID string, n int) map[string]any {
	t.Helper()
	return eventually.Value(t, 20*time.Second, fmt.Sprintf("one delivery with %d attempts in the log", n), func() (map[string]any, error) {
		ds, _ := deliveryLog(t, h, h.Key, whID, "")
		if len(ds) == 1 && len(ds[0]["attempts"].([]any)) >= n {
			return ds[0], nil
		}
		return nil, fmt.Errorf("got %+v", ds)
	})
}

// A receiver that fails twice and then acknowledges shows three attempts in the log,
// each with its status, duration and the start of the answer; redeliver sends the event
// a fourth time, and the log shows that attempt too.
func TestWebhookDeliveryLogAndRedeliver(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.StartDelivering(t, hubtest.WithClock(clock))
	const slow = 50 * time.Millisecond
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		switch n := r.Attempt(); {
		case n == 1:
			time.Sleep(slow) // sleep: a slow receiver, for the recorded duration
			fallthrough
		case n == 2:
			w.WriteHeader(500)
			fmt.Fprintf(w, "busy \xff, try again (attempt %d)", n)
		default:
			w.WriteHeader(200)
			io.WriteString(w, `{"ok":true}`)
		}
	})
	whID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	wsID := hubtest.CreateWorkspace(t, h, "hello")
	for n := 1; n <= 2; n++ {
		rc.Wait(t, n)
		d := settled(t, h, h.Account.ID, n)
		clock.Advance(d.NextAttemptAt.Sub(clock.Now()))
	}
	event := rc.Wait(t, 3)[0].Event
	settled(t, h, h.Account.ID, 3)

	d := logAttempts(t, h, whID, 3)
	if d["status"] != "delivered" || d["eventId"] != event.EventID || d["eventType"] != "workspace.turn.completed" ||
		d["workspaceId"] != wsID || d["webhookId"] != whID || d["attemptCount"] != 3.0 || d["deliveredAt"] == nil ||
		d["nextAttemptAt"] != nil {
		t.Fatalf("expected the delivery of %s delivered after 3 attempts, got %+v", event.EventID, d)
	}
	attempts := d["attempts"].([]any)
	want := []struct {
		status  float64
		errText string
		excerpt string
	}{
		{500, "HTTP 500", "busy \uFFFD, try again (attempt 1)"},
		{500, "HTTP 500", "busy \uFFFD, try again (attempt 2)"},
		{200, "", `{"ok":true}`},
	}
	for i, w := range want {
		a := attempts[i].(map[string]any)
		errText, _ := a["error"].(string)
		if a["attempt"] != float64(i+1) || a["statusCode"] != w.status || errText != w.errText || a["responseExcerpt"] != w.excerpt {
			t.Fatalf("attempt %d: expected status %v, error %q and excerpt %q, got %+v", i+1, w.status, w.errText, w.excerpt, a)
		}
		if a["startedAt"].(float64) <= 0 || a["durationMs"].(float64) < 0 {
			t.Fatalf("attempt %d: expected a start and a duration, got %+v", i+1, a)
		}
	}
	if ms := attempts[0].(map[string]any)["durationMs"].(float64); ms < float64(slow.Milliseconds()) {
		t.Fatalf("expected the slow first attempt to take at least %s, got %v ms", slow, ms)
	}

	r := h.Call("POST", "/v1/api/webhooks/"+whID+"/deliveries/"+d["deliveryId"].(string)+"/redeliver", h.Key, nil).Expect(t, 202, "")
	again := r.Body["delivery"].(map[string]any)
	if again["status"] != "pending" || again["nextAttemptAt"] == nil || len(again["attempts"].([]any)) != 3 {
		t.Fatalf("expected the delivery pending and due with its 3 attempts, got %+v", again)
	}
	got := rc.Wait(t, 4)
	if last := got[3]; last.Attempt() != 4 || last.Event.EventID != event.EventID {
		t.Fatalf("expected attempt 4 of %s, got attempt %d of %s", event.EventID, last.Attempt(), last.Event.EventID)
	}
	d = logAttempts(t, h, whID, 4)
	if a := d["attempts"].([]any)[3].(map[string]any); a["attempt"] != 4.0 || a["statusCode"] != 200.0 || d["status"] != "delivered" {
		t.Fatalf("expected the fourth attempt acknowledged in the log, got %+v", d)
	}
}

// Another account's key sees neither the log nor the redeliver of an endpoint that is
// not its own, and a delivery is reached only through its own endpoint.
func TestWebhookDeliveryLogIsTheAccountsOwn(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	whID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "hello")
	rc.Wait(t, 1)
	dlvID := logAttempts(t, h, whID, 1)["deliveryId"].(string)
	_, otherKey := h.NewAccount(true)
	otherWh, _ := hubtest.AddWebhook(t, h, otherKey, rc.URL+"?other")
	secondWh, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL+"?second")
	redeliver := func(wh, dlv string) string { return "/v1/api/webhooks/" + wh + "/deliveries/" + dlv + "/redeliver" }

	h.Call("GET", "/v1/api/webhooks/"+whID+"/deliveries", otherKey, nil).Expect(t, 404, "webhook_not_found")
	h.Call("POST", redeliver(whID, dlvID), otherKey, nil).Expect(t, 404, "webhook_not_found")
	h.Call("POST", redeliver(otherWh, dlvID), otherKey, nil).Expect(t, 404, "not_found")
	h.Call("POST", redeliver(secondWh, dlvID), h.Key, nil).Expect(t, 404, "not_found")
	h.Call("POST", redeliver(whID, "dlv_nope"), h.Key, nil).Expect(t, 404, "not_found")
	h.Call("GET", "/v1/api/webhooks/wh_nope/deliveries", h.Key, nil).Expect(t, 404, "webhook_not_found")
	if ds, next := deliveryLog(t, h, otherKey, otherWh, ""); len(ds) != 0 || next != "" {
		t.Fatalf("expected the other account's endpoint to have an empty log, got %+v, %q", ds, next)
	}
	if n := len(rc.Received()); n != 1 {
		t.Fatalf("expected no request beyond the one delivery, got %d", n)
	}
}

// The log pages newest first with before=nextBefore; limit is 1 to 200 (larger is
// capped) and a malformed limit or cursor is refused.
func TestWebhookDeliveryLogPages(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	whID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	id := hubtest.CreateWorkspace(t, h, "first")
	hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "second"}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	got := rc.Wait(t, 2)

	all, next := deliveryLog(t, h, h.Key, whID, "?limit=500")
	if len(all) != 2 || next != "" {
		t.Fatalf("expected both deliveries on one page (limit capped at 200), got %d and %q", len(all), next)
	}
	newest, oldest := got[1].Event.EventID, got[0].Event.EventID
	if all[0]["eventId"] != newest || all[1]["eventId"] != oldest {
		t.Fatalf("expected newest first (%s, %s), got %v, %v", newest, oldest, all[0]["eventId"], all[1]["eventId"])
	}
	page, next := deliveryLog(t, h, h.Key, whID, "?limit=1")
	if len(page) != 1 || page[0]["eventId"] != newest || next == "" {
		t.Fatalf("expected the newest delivery and a cursor, got %+v, %q", page, next)
	}
	page, next = deliveryLog(t, h, h.Key, whID, "?limit=1&before="+next)
	if len(page) != 1 || page[0]["eventId"] != oldest || next == "" {
		t.Fatalf("expected the oldest delivery and a cursor, got %+v, %q", page, next)
	}
	if page, next = deliveryLog(t, h, h.Key, whID, "?limit=1&before="+next); len(page) != 0 || next != "" {
		t.Fatalf("expected an empty last page, got %+v, %q", page, next)
	}
	for _, q := range []string{"?limit=0", "?limit=-1", "?limit=ten", "?before=nodot", "?before=x.dlv_1", "?before=" + strings.Repeat("1", 30) + ".a"} {
		h.Call("GET", "/v1/api/webhooks/"+whID+"/deliveries"+q, h.Key, nil).Expect(t, 400, "invalid_request")
	}
}

// A delivery redelivered past the log's 20 attempts keeps its page bounded: the log
// lists the newest 20, oldest first, and attemptCount counts them all, so the two
// earlier ones are known not shown; redeliver's answer and the operator's view hold
// the same 20.
func TestWebhookDeliveryLogShowsTheNewestTwentyAttempts(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	rc := hubtest.NewReceiver(t, nil)
	whID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "hello")
	dlvID := logAttempts(t, h, whID, 1)["deliveryId"].(string)
	path := "/v1/api/webhooks/" + whID + "/deliveries/" + dlvID + "/redeliver"
	// made waits until the delivery has made n attempts (the log lists 20 at most, so
	// its count says).
	made := func(n int) map[string]any {
		t.Helper()
		return eventually.Value(t, 20*time.Second, fmt.Sprintf("one delivery with %d attempts made", n), func() (map[string]any, error) {
			ds, _ := deliveryLog(t, h, h.Key, whID, "")
			if len(ds) == 1 && ds[0]["attemptCount"].(float64) >= float64(n) {
				return ds[0], nil
			}
			return nil, fmt.Errorf("got %+v", ds)
		})
	}
	for n := 2; n <= 22; n++ {
		h.Call("POST", path, h.Key, nil).Expect(t, 202, "")
		made(n)
	}
	// numbers lists the attempt numbers a delivery's JSON holds.
	numbers := func(d map[string]any) (ns []int) {
		for _, a := range d["attempts"].([]any) {
			ns = append(ns, int(a.(map[string]any)["attempt"].(float64)))
		}
		return ns
	}
	var newest []int
	for n := 3; n <= 22; n++ {
		newest = append(newest, n)
	}
	want := fmt.Sprint(newest)
	d := made(22)
	if got := fmt.Sprint(numbers(d)); got != want || d["attemptCount"] != 22.0 {
		t.Fatalf("expected attempts %s of 22, got %s of %v", want, got, d["attemptCount"])
	}
	again := h.Call("POST", path, h.Key, nil).Expect(t, 202, "").Body["delivery"].(map[string]any)
	if got := fmt.Sprint(numbers(again)); got != want {
		t.Fatalf("expected redeliver to answer attempts %s, got %s", want, got)
	}
	made(23)
	ds := deliveries(t, h, h.Account.ID)
	if len(ds) != 1 || len(ds[0].Log) != 20 || ds[0].Log[0].Attempt != 4 || ds[0].Log[19].Attempt != 23 || ds[0].EarlierAttempts() != 3 {
		t.Fatalf("expected the operator's view to hold attempts 4 to 23 of 23, got %+v", ds)
	}
}

// An attempt the receiver acknowledged is settled delivered even when its log line
// cannot be written (here a trigger refuses every line): left unsettled, it would be
// sent again each time its lease ran out. The log then lacks that line, and says so in
// the hub's log.
func TestAnAcknowledgedDeliveryIsSettledWhenItsLogLineCannotBeWritten(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	if _, err := h.PG().DB().Exec(`CREATE FUNCTION refuse_log_line() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN RAISE EXCEPTION 'the log is full'; END $$;
		CREATE TRIGGER refuse_log_line BEFORE INSERT ON webhook_delivery_attempts FOR EACH ROW EXECUTE FUNCTION refuse_log_line()`); err != nil {
		t.Fatal(err)
	}
	rc := hubtest.NewReceiver(t, nil)
	whID, _ := hubtest.AddWebhook(t, h, h.Key, rc.URL)
	hubtest.CreateWorkspace(t, h, "hello")
	rc.Wait(t, 1)
	d := settled(t, h, h.Account.ID, 1)
	if d.Status != "delivered" || d.DeliveredAt == nil {
		t.Fatalf("expected the acknowledged delivery settled delivered, got %+v", d)
	}
	if ds, _ := deliveryLog(t, h, h.Key, whID, ""); len(ds) != 1 || len(ds[0]["attempts"].([]any)) != 0 {
		t.Fatalf("expected the delivery without a log line, got %+v", ds)
	}
}
