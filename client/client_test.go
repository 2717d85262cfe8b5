package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wshub/wshub/client"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

func newClient(t *testing.T, h *hubtest.Hub, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(h.URL, h.Key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startRuntime(t *testing.T) *hubtest.Hub {
	return hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)))
}

// The asynchronous loop in three calls: create, send, wait for the reply; a failed
// turn comes back with its turnFailure.
func TestCreateSendWaitForReply(t *testing.T) {
	t.Parallel()
	h := startRuntime(t)
	c := newClient(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, err := c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Prompt: "write first", Agent: "agent_1", Model: "m"})
	if err != nil || !strings.HasPrefix(ws.WorkspaceID, "ws_") || ws.State != "queued" {
		t.Fatalf("CreateWorkspace: %+v, %v", ws, err)
	}
	page, err := c.ListMessages(ctx, ws.WorkspaceID, 0, 0)
	if err != nil || len(page.Messages) != 1 {
		t.Fatalf("ListMessages: %+v, %v", page, err)
	}
	r, err := c.WaitForReply(ctx, ws.WorkspaceID, page.Messages[0].MessageID)
	if err != nil || r.Assistant == nil || r.Assistant.Text != "wrote first.txt" || r.Outcome() != "completed" || r.Message.Status != "settled" {
		t.Fatalf("WaitForReply: %+v, %v", r, err)
	}

	receipt, err := c.SendMessage(ctx, ws.WorkspaceID, client.SendMessageRequest{Text: "fail on purpose"})
	if err != nil || receipt.Seq != 3 {
		t.Fatalf("SendMessage: %+v, %v", receipt, err)
	}
	r, err = c.WaitForReply(ctx, ws.WorkspaceID, receipt.MessageID)
	if err != nil || r.Outcome() != "error" || r.Failure == nil || r.Failure.Code != "agent_error" ||
		!strings.Contains(r.Failure.Message, "tripped over something") {
		t.Fatalf("expected the failed turn with its turnFailure, got %+v (%+v), %v", r, r.Failure, err)
	}
	got, err := c.GetWorkspace(ctx, ws.WorkspaceID)
	if err != nil || got.LastTurn == nil || got.LastTurn.Outcome != "error" || got.LatestSeq != 4 {
		t.Fatalf("GetWorkspace: %+v, %v", got, err)
	}
	if _, err := c.WaitForReply(ctx, ws.WorkspaceID, "msg_nope"); !errors.Is(err, client.ErrMessageNotFound) {
		t.Fatalf("expected ErrMessageNotFound, got %v", err)
	}
}

// API errors are *client.Error with the code; a key that is wrong is not retried.
func TestTypedErrors(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	c := newClient(t, h)
	ctx := context.Background()
	_, err := c.GetWorkspace(ctx, "ws_0000000000000000")
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 404 || e.Code != "cloud_workspace_not_found" || e.Temporary() {
		t.Fatalf("expected a 404 cloud_workspace_not_found, got %#v", err)
	}
	bad, _ := client.New(h.URL, "svc_wrong")
	if _, err := bad.ListProjects(ctx); !errors.As(err, &e) || e.Code != "invalid_api_key" {
		t.Fatalf("expected invalid_api_key, got %v", err)
	}
	if _, err := client.New("ftp://x", "svc_x"); err == nil {
		t.Fatal("expected a non-http base URL refused")
	}
}

// flaky forwards every request to the hub but loses the answer of the first n
// POSTs (a 503 instead, as from a proxy whose upstream reset): the hub did the work.
func flaky(t *testing.T, hubURL string, n int32) (*httptest.Server, *atomic.Int32) {
	u, _ := url.Parse(hubURL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var lost atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && lost.Load() < n {
			lost.Add(1)
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"service_unavailable"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &lost
}

// Create, send and upload retried after lost answers act once: the generated
// idempotency key makes each retry a replay.
func TestRetriesNeverDuplicate(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	srv, lost := flaky(t, h.URL, 2)
	c, err := client.New(srv.URL, h.Key, client.WithRetry(client.Retry{Attempts: 4, Min: 10 * time.Millisecond, Max: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ws, err := c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Agent: "agent_1", Model: "m"})
	if err != nil || lost.Load() != 2 {
		t.Fatalf("expected the create to succeed after two lost answers, got %v (%d lost)", err, lost.Load())
	}
	list, _ := newClient(t, h).ListWorkspaces(ctx)
	if len(list) != 1 {
		t.Fatalf("expected one workspace after three tries, got %d", len(list))
	}
	lost.Store(0)
	asset, err := c.UploadAttachment(ctx, ws.WorkspaceID, client.Upload{Name: "n.txt", ContentType: "text/plain", Data: []byte("notes")})
	if err != nil || asset.OriginalName != "n.txt" {
		t.Fatalf("UploadAttachment: %+v, %v", asset, err)
	}
	lost.Store(0)
	receipt, err := c.SendMessage(ctx, ws.WorkspaceID, client.SendMessageRequest{Text: "once", Attachments: []string{asset.AssetID}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := c.ListMessages(ctx, ws.WorkspaceID, 0, 0)
	if len(page.Messages) != 1 || page.Messages[0].MessageID != receipt.MessageID || len(page.Messages[0].Attachments) != 1 {
		t.Fatalf("expected one message with its attachment after retries, got %+v", page.Messages)
	}
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM assets`); err != nil || n != 1 {
		t.Fatalf("expected one asset after retries, got %d (%v)", n, err)
	}

	// A context that ends stops the retries.
	lost.Store(-1000)
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	slow, _ := client.New(srv.URL, h.Key, client.WithRetry(client.Retry{Attempts: 100, Min: 20 * time.Millisecond, Max: time.Second}))
	if _, err := slow.CreateWorkspace(short, client.CreateWorkspaceRequest{Agent: "agent_1", Model: "m"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expected the deadline to end the retries, got %v", err)
	}
}

// Messages follows afterSeq across pages until it has caught up.
func TestMessagesIteratesAcrossPages(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	c := newClient(t, h)
	ctx := context.Background()
	ws, err := c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Agent: "agent_1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 205 {
		if _, err := c.SendMessage(ctx, ws.WorkspaceID, client.SendMessageRequest{Text: fmt.Sprint("m", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var seqs []int64
	for m, err := range c.Messages(ctx, ws.WorkspaceID, 3) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, m.Seq)
	}
	if len(seqs) != 202 || seqs[0] != 4 || seqs[201] != 205 {
		t.Fatalf("expected seqs 4..205, got %d from %v to %v", len(seqs), seqs[0], seqs[len(seqs)-1])
	}
}

func TestCatalogAndWebhooks(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	c := newClient(t, h)
	ctx := context.Background()
	projects, err := c.ListProjects(ctx)
	if err != nil || len(projects) != 1 || projects[0].ProjectID != h.Project.ID {
		t.Fatalf("ListProjects: %+v, %v", projects, err)
	}
	providers, entitled, err := c.ListProviders(ctx)
	if err != nil || !entitled || len(providers) == 0 || providers[0].ProviderID != "local" {
		t.Fatalf("ListProviders: %+v %v, %v", providers, entitled, err)
	}
	if _, err := c.ListAgents(ctx); err != nil {
		t.Fatal(err)
	}
	wh, secret, err := c.CreateWebhook(ctx, "https://hooks.example.com/ci", "CI")
	if err != nil || !strings.HasPrefix(secret, "whsec_") || wh.Description != "CI" {
		t.Fatalf("CreateWebhook: %+v %q, %v", wh, secret, err)
	}
	list, err := c.ListWebhooks(ctx)
	if err != nil || len(list) != 1 || list[0].WebhookID != wh.WebhookID {
		t.Fatalf("ListWebhooks: %+v, %v", list, err)
	}
	if err := c.DeleteWebhook(ctx, wh.WebhookID); err != nil {
		t.Fatal(err)
	}
	var e *client.Error
	if err := c.DeleteWebhook(ctx, wh.WebhookID); !errors.As(err, &e) || e.Code != "webhook_not_found" {
		t.Fatalf("expected webhook_not_found, got %v", err)
	}
}

// A base URL given with the API's own path, as the README's curl examples write it,
// reaches the same hub as the bare one.
func TestBaseURLMayEndWithTheAPIPath(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	for _, base := range []string{h.URL, h.URL + "/", h.URL + "/v1/api", h.URL + "/v1/api/"} {
		c, err := client.New(base, h.Key)
		if err != nil {
			t.Fatal(err)
		}
		if projects, err := c.ListProjects(context.Background()); err != nil || len(projects) != 1 {
			t.Fatalf("base %s: expected the account's project, got %+v %v", base, projects, err)
		}
	}
}

// Live turns through the client: the events of a turn, an approval decided once, and
// a stop.
func TestLiveTurnCalls(t *testing.T) {
	t.Parallel()
	h := startRuntime(t)
	c := newClient(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, err := c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Prompt: "ask go", Agent: "agent_1", Model: "m",
		RuntimeMode: "approval-required"})
	if err != nil {
		t.Fatal(err)
	}
	var asked client.TurnEvent
	var after int64
	eventually.Eventually(t, time.Minute, "the agent's ask", func() bool {
		page, err := c.ListEvents(ctx, ws.WorkspaceID, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			if e.Type == "approval_requested" {
				asked = e
			}
		}
		after = page.LatestSeq
		return asked.ApprovalID != ""
	})
	if asked.Tool != "bash" || asked.Summary != "rm -rf go" {
		t.Fatalf("expected the ask for rm -rf go, got %+v", asked)
	}
	a, err := c.DecideApproval(ctx, ws.WorkspaceID, asked.ApprovalID, true)
	if err != nil || a.Status != "allowed" || a.DecidedBy != "api" || a.TurnID != asked.TurnID {
		t.Fatalf("DecideApproval: %+v, %v", a, err)
	}
	var ce *client.Error
	if _, err := c.DecideApproval(ctx, ws.WorkspaceID, asked.ApprovalID, false); !errors.As(err, &ce) || ce.Code != "approval_not_pending" {
		t.Fatalf("expected a second decision refused with approval_not_pending, got %v", err)
	}
	receipt, err := c.SendMessage(ctx, ws.WorkspaceID, client.SendMessageRequest{Text: "sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.ListMessages(ctx, ws.WorkspaceID, receipt.Seq-1, 1)
	if err != nil || len(page.Messages) != 1 || page.Messages[0].MessageID != receipt.MessageID {
		t.Fatalf("ListMessages: %+v, %v", page, err)
	}
	turn := page.Messages[0].TurnID
	if _, err := c.StopTurn(ctx, ws.WorkspaceID, turn); err != nil {
		t.Fatalf("StopTurn: %v", err)
	}
	r, err := c.WaitForReply(ctx, ws.WorkspaceID, receipt.MessageID)
	if err != nil || r.Outcome() != "interrupted" {
		t.Fatalf("expected the stopped turn interrupted, got %+v, %v", r, err)
	}
	if _, err := c.StopTurn(ctx, ws.WorkspaceID, turn); !errors.As(err, &ce) || ce.Code != "turn_not_running" {
		t.Fatalf("expected an ended turn refused with turn_not_running, got %v", err)
	}
}

// A rate-limited call waits out the hub's Retry-After and then succeeds: retrying at
// its own pace (10-20 ms here) would be refused every time, since the key's bucket
// gets a token back only each second. A quota is not retried.
func TestClientWaitsOutRetryAfterButNotAQuota(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.APIRate, c.APIBurst = 1, 1 }))
	c := newClient(t, h, client.WithRetry(client.Retry{Attempts: 3, Min: 10 * time.Millisecond, Max: 20 * time.Millisecond}))
	ctx := context.Background()
	if _, err := c.ListWorkspaces(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListWorkspaces(ctx); err != nil {
		t.Fatalf("expected the second call to wait for its token and succeed, got %v", err)
	}

	zero := 0
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{MaxWorkspaces: &zero}); err != nil {
		t.Fatal(err)
	}
	quick := newClient(t, h, client.WithRetry(client.Retry{Attempts: 1}))
	_, err := quick.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Agent: "agent_1", Model: "m"})
	var e *client.Error
	for errors.As(err, &e) && e.Code == "rate_limited" { // the bucket's one token a second
		_, err = c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Agent: "agent_1", Model: "m"})
	}
	if !errors.As(err, &e) || e.Code != "quota_exceeded" || e.Temporary() {
		t.Fatalf("expected a quota_exceeded that is not temporary, got %v", err)
	}
}

// The delivery log through the client: a receiver that fails twice and then takes the
// event shows three attempts; Redeliver sends it a fourth time; another account's key
// reaches neither, and a malformed cursor is refused.
func TestDeliveryLogAndRedeliver(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)), hubtest.WithClock(clock),
		hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure = true; c.WebhookPoll = 50 * time.Millisecond }))
	rc := hubtest.NewReceiver(t, func(w http.ResponseWriter, r hubtest.Received) {
		if r.Attempt() <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "not yet")
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	c := newClient(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wh, _, err := c.CreateWebhook(ctx, rc.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateWorkspace(ctx, client.CreateWorkspaceRequest{Prompt: "hello", Agent: "agent_1", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	// logged waits for the endpoint's one delivery to show n attempts (polling the log).
	logged := func(n int) client.Delivery {
		t.Helper()
		for {
			page, err := c.ListDeliveries(ctx, wh.WebhookID, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Deliveries) == 1 && len(page.Deliveries[0].Attempts) >= n {
				return page.Deliveries[0]
			}
			select {
			case <-ctx.Done():
				t.Fatalf("expected a delivery with %d attempts, got %+v", n, page.Deliveries)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	for n := 1; n <= 2; n++ {
		d := logged(n)
		if d.Status != "pending" || d.NextAttemptAt == nil {
			t.Fatalf("after failed attempt %d: expected pending with a next attempt, got %+v", n, d)
		}
		clock.Advance(d.NextAttemptAt.Time().Sub(clock.Now()))
	}
	d := logged(3)
	if d.Status != "delivered" || d.AttemptCount != 3 || d.EarlierAttempts() != 0 || d.EventType != "workspace.turn.completed" ||
		d.EventID != rc.Received()[0].Event.EventID {
		t.Fatalf("expected delivered after 3 attempts, got %+v", d)
	}
	for i, want := range []int{500, 500, 204} {
		a := d.Attempts[i]
		if a.Attempt != i+1 || a.StatusCode == nil || *a.StatusCode != want || a.DurationMS < 0 || a.StartedAt == 0 {
			t.Fatalf("attempt %d: expected status %d, got %+v", i+1, want, a)
		}
	}
	if d.Attempts[0].ResponseExcerpt != "not yet" || d.Attempts[0].Error != "HTTP 500" || d.Attempts[2].Error != "" {
		t.Fatalf("expected the failures' answer and error kept, got %+v", d.Attempts)
	}

	again, err := c.Redeliver(ctx, wh.WebhookID, d.DeliveryID)
	if err != nil || again.Status != "pending" || again.DeliveryID != d.DeliveryID {
		t.Fatalf("Redeliver: %+v, %v", again, err)
	}
	if got := rc.Wait(t, 4)[3]; got.Attempt() != 4 || got.Event.EventID != d.EventID {
		t.Fatalf("expected attempt 4 of %s, got attempt %d of %s", d.EventID, got.Attempt(), got.Event.EventID)
	}
	if d := logged(4); d.Status != "delivered" || *d.Attempts[3].StatusCode != 204 {
		t.Fatalf("expected the fourth attempt in the log, got %+v", d)
	}

	_, otherKey := h.NewAccount(true)
	other, err := client.New(h.URL, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	var e *client.Error
	if _, err := other.ListDeliveries(ctx, wh.WebhookID, "", 0); !errors.As(err, &e) || e.Status != 404 || e.Code != "webhook_not_found" {
		t.Fatalf("another account's ListDeliveries: expected 404 webhook_not_found, got %v", err)
	}
	if _, err := other.Redeliver(ctx, wh.WebhookID, d.DeliveryID); !errors.As(err, &e) || e.Status != 404 || e.Code != "webhook_not_found" {
		t.Fatalf("another account's Redeliver: expected 404 webhook_not_found, got %v", err)
	}
	if _, err := c.ListDeliveries(ctx, wh.WebhookID, "not-a-cursor", 0); !errors.As(err, &e) || e.Status != 400 || e.Code != "invalid_request" {
		t.Fatalf("expected a malformed cursor refused with invalid_request, got %v", err)
	}
}
