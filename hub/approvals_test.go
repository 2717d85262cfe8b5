package hub_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/webhook"
)

// approvalTimeout is short so the timeout case is quick, and long enough that an
// answer through the API always comes first.
const approvalTimeout = 4 * time.Second

// startApprovals runs a hub with the local and process providers, the approval
// timeout, and webhooks allowed to loopback receivers.
func startApprovals(t *testing.T) *hubtest.Hub {
	t.Helper()
	return startProcessHub(t, hubtest.WithConfig(func(c *hub.Config) {
		c.ApprovalTimeout = approvalTimeout
		c.WebhookAllowInsecure = true
		c.WebhookPoll = 50 * time.Millisecond
	}))
}

// nextOf reads events until one of type typ, failing after 30 s.
func nextOf(t *testing.T, events <-chan sseEvent, typ string) (sseEvent, []sseEvent) {
	t.Helper()
	var seen []sseEvent
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before a %s; saw %v", typ, seen)
			}
			seen = append(seen, e)
			if e.Type == typ {
				return e, seen
			}
		case <-deadline:
			t.Fatalf("no %s within 30 s; saw %v", typ, seen)
		}
	}
}

func decide(t *testing.T, h *hubtest.Hub, id, approvalID, decision string, status int, code string) map[string]any {
	t.Helper()
	return h.Call("POST", "/v1/api/workspaces/"+id+"/approvals/"+approvalID, h.Key,
		map[string]any{"decision": decision}).Expect(t, status, code).Body
}

// A command agent asks for approvals over its event protocol; each ask is an event
// on the stream and a signed webhook event, the API's decision reaches the agent,
// a second decision is refused, and the turn goes on. On the local provider and
// across the runtime API (process).
func TestApprovalsAnsweredThroughTheAPI(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			approvalsThroughTheAPI(t, startApprovals(t), provider)
		})
	}
}

func approvalsThroughTheAPI(t *testing.T, h *hubtest.Hub, provider string) {
	rc := hubtest.NewReceiver(t, nil)
	_, secret := addWebhook(t, h, h.Key, rc.URL)
	id := createOn(t, h, provider, "", "runtimeMode", "approval-required")
	events, drop := stream(t, h, id, "")
	defer drop()
	send(t, h, id, "ask first second")

	asked, before := nextOf(t, events, "approval_requested")
	if asked.Tool != "bash" || asked.Summary != "rm -rf first" || asked.ApprovalID == "" ||
		len(before) != 2 || before[0].Summary != "before first" {
		t.Fatalf("expected the step, then the ask for rm -rf first, got %v", before)
	}
	// The webhook event: signed like a finished turn's, saying what is asked.
	got := rc.Wait(t, 1)[0]
	if err := webhook.Verify(got.Body, got.Header.Get(webhook.HeaderSignature), secret); err != nil {
		t.Fatalf("expected the approval event signed, got %v", err)
	}
	ev, err := webhook.ConstructEvent(got.Body, got.Header.Get(webhook.HeaderSignature), secret)
	if err != nil || ev.Type != webhook.TypeApprovalRequested || ev.ApprovalID != asked.ApprovalID || ev.WorkspaceID != id ||
		ev.TurnID != asked.TurnID || ev.Tool != "bash" || ev.Summary != "rm -rf first" ||
		ev.ExpiresAt-ev.CreatedAt != approvalTimeout.Milliseconds() || ev.EventID != got.Header.Get("Service-Event-Id") {
		t.Fatalf("expected the approval event to name the ask, got %s (%v)", got.Body, err)
	}

	r := decide(t, h, id, asked.ApprovalID, "allow", 200, "")
	if r["status"] != "allowed" || r["decidedBy"] != "api" || r["decidedAt"] == nil || r["turnId"] != asked.TurnID {
		t.Fatalf("expected the approval allowed by the API, got %v", r)
	}
	decide(t, h, id, asked.ApprovalID, "deny", 409, "approval_not_pending")
	resolved, _ := nextOf(t, events, "approval_resolved")
	if resolved.ApprovalID != asked.ApprovalID || resolved.Status != "allowed" || resolved.DecidedBy != "api" {
		t.Fatalf("expected the approval resolved allowed, got %+v", resolved)
	}

	second, _ := nextOf(t, events, "approval_requested")
	decide(t, h, id, second.ApprovalID, "deny", 200, "")
	until(t, events)
	waitFor(t, h, id, "idle after the turn", idleAfterTurns(1))
	reply := replies(t, h, id)
	want := `completed: {"type":"approval_resolved","id":"first","decision":"allow"}` + "\n" +
		`{"type":"approval_resolved","id":"second","decision":"deny","reason":"Denied by a person reviewing this workspace."}`
	if len(reply) != 1 || reply[0] != want {
		t.Fatalf("expected the agent to have read both decisions, got %q", reply)
	}

	// Bad input.
	decide(t, h, id, "apr_0000000000000000", "allow", 404, "approval_not_found")
	decide(t, h, id, "nonsense", "allow", 404, "approval_not_found")
	decide(t, h, id, second.ApprovalID, "maybe", 400, "invalid_request")
	h.Call("POST", "/v1/api/workspaces/"+id+"/approvals/"+second.ApprovalID, h.Key, map[string]any{}).Expect(t, 400, "invalid_request")
	h.Call("POST", "/v1/api/workspaces/"+id+"/approvals/"+second.ApprovalID, h.Key, []byte("{")).Expect(t, 400, "invalid_json")
	h.Call("POST", "/v1/api/workspaces/ws_0000000000000000/approvals/"+second.ApprovalID, h.Key,
		map[string]any{"decision": "allow"}).Expect(t, 404, "cloud_workspace_not_found")
}

// An approval nobody answers is denied when the approval timeout passes; a decision
// after that is refused. Stopping a turn that waits for a decision closes it.
func TestApprovalsTimeOutAndCloseWithTheTurn(t *testing.T) {
	t.Parallel()
	h := startApprovals(t)
	id := createOn(t, h, "local", "", "runtimeMode", "approval-required")
	events, drop := stream(t, h, id, "")
	defer drop()

	send(t, h, id, "ask late")
	asked, _ := nextOf(t, events, "approval_requested")
	resolved, _ := nextOf(t, events, "approval_resolved")
	if resolved.Status != "timed_out" || resolved.ApprovalID != asked.ApprovalID {
		t.Fatalf("expected the approval timed out, got %+v", resolved)
	}
	if waited := time.UnixMilli(resolved.CreatedAt).Sub(time.UnixMilli(asked.CreatedAt)); waited < approvalTimeout-100*time.Millisecond || waited > approvalTimeout+3*time.Second {
		t.Fatalf("expected the timeout after about %s, took %s", approvalTimeout, waited)
	}
	until(t, events)
	waitFor(t, h, id, "idle after the turn", idleAfterTurns(1))
	if got := replies(t, h, id); len(got) != 1 || !strings.Contains(got[0], `"decision":"deny","reason":"Denied: nobody answered the approval request in time."`) {
		t.Fatalf("expected the agent told of the timeout, got %q", got)
	}
	decide(t, h, id, asked.ApprovalID, "allow", 409, "approval_not_pending")

	send(t, h, id, "ask stopped")
	asked, _ = nextOf(t, events, "approval_requested")
	h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+asked.TurnID+"/stop", h.Key, nil).Expect(t, 202, "")
	resolved, _ = nextOf(t, events, "approval_resolved")
	finished, _ := nextOf(t, events, "turn_finished")
	if resolved.Status != "closed" || resolved.ApprovalID != asked.ApprovalID || finished.Outcome != "interrupted" {
		t.Fatalf("expected the stopped turn's approval closed, got %+v then %+v", resolved, finished)
	}
	decide(t, h, id, asked.ApprovalID, "allow", 409, "approval_not_pending")
}

// Outside the approval-required mode nobody is asked: the agent is denied at once.
func TestApprovalsOutsideTheModeAreDenied(t *testing.T) {
	t.Parallel()
	h := startApprovals(t)
	id := createOn(t, h, "local", "ask x")
	waitFor(t, h, id, "idle after the turn", idleAfterTurns(1))
	if got := replies(t, h, id); len(got) != 1 || !strings.Contains(got[0], `"decision":"deny","reason":"Denied: nobody answers approvals in this runtime mode."`) {
		t.Fatalf("expected the ask denied at once, got %q", got)
	}
	for _, e := range eventsPage(t, h, id, 0) {
		if strings.HasPrefix(e.Type, "approval") {
			t.Fatalf("expected no approval events, got %v", e)
		}
	}
}

// An ask is shown whole however long, up to core.MaxApprovalSummary; a longer one is
// denied at once and shown to nobody, never cut: a person allows what they read, and
// a cut command's hidden tail would run too. On the local provider and across the
// runtime API (process).
func TestApprovalsAreShownWholeOrDenied(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			h := startApprovals(t)
			id := createOn(t, h, provider, "", "runtimeMode", "approval-required")
			events, drop := stream(t, h, id, "")
			defer drop()
			long := strings.Repeat("x", 1000)
			send(t, h, id, "ask "+long)
			asked, _ := nextOf(t, events, "approval_requested")
			if asked.Summary != "rm -rf "+long {
				t.Fatalf("expected the ask shown whole (%d characters), got %d", len("rm -rf "+long), len(asked.Summary))
			}
			decide(t, h, id, asked.ApprovalID, "deny", 200, "")
			waitFor(t, h, id, "idle after the first turn", idleAfterTurns(1))

			send(t, h, id, "ask "+strings.Repeat("y", core.MaxApprovalSummary))
			waitFor(t, h, id, "idle after the second turn", idleAfterTurns(2))
			got := replies(t, h, id)
			if len(got) != 2 || !strings.Contains(got[1], `"decision":"deny","reason":"Denied: the request is too long to be shown whole`) {
				t.Fatalf("expected the long ask denied at once, got %q", got)
			}
			asks := 0
			for _, e := range eventsPage(t, h, id, 0) {
				if e.Type == "approval_requested" {
					asks++
				}
			}
			if asks != 1 {
				t.Fatalf("expected the long ask shown to nobody (one ask in all), got %d", asks)
			}
		})
	}
}
