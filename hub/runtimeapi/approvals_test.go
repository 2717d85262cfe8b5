package runtimeapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	return hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) {
		c.ApprovalTimeout = approvalTimeout
		c.WebhookAllowInsecure = true
		c.WebhookPoll = 50 * time.Millisecond
	}))
}

// A command agent asks for approvals over its event protocol; each ask is an event
// on the stream and a signed webhook event, the API's decision reaches the agent,
// a second decision is refused, and the turn goes on. On the local provider and
// across the runtime API (process).
func TestApprovalsAnsweredThroughTheAPI(t *testing.T) {
	t.Parallel()
	onEachProvider(t, approvalsThroughTheAPI)
}

// onEachProvider runs check on a hub of its own, on the local provider and across
// the runtime API (process).
func onEachProvider(t *testing.T, check func(t *testing.T, h *hubtest.Hub, provider string)) {
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			check(t, startApprovals(t), provider)
		})
	}
}

// askingTurn sends prompt to a new approval-required workspace on provider, with a
// webhook receiver registered and the workspace's event stream open (closed with
// the test).
func askingTurn(t *testing.T, h *hubtest.Hub, provider, prompt string) (rc *hubtest.Receiver, secret, id string, events <-chan hubtest.Event) {
	rc = hubtest.NewReceiver(t, nil)
	_, secret = hubtest.AddWebhook(t, h, h.Key, rc.URL)
	id = hubtest.CreateOn(t, h, provider, "", "runtimeMode", "approval-required")
	events, drop := hubtest.Stream(t, h, id, "")
	t.Cleanup(drop)
	hubtest.Send(t, h, id, prompt)
	return rc, secret, id, events
}

func approvalsThroughTheAPI(t *testing.T, h *hubtest.Hub, provider string) {
	rc, secret, id, events := askingTurn(t, h, provider, "ask first second")

	asked, before := hubtest.NextOf(t, events, "approval_requested")
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

	r := hubtest.Decide(t, h, id, asked.ApprovalID, "allow", 200, "")
	if r["status"] != "allowed" || r["decidedBy"] != "api" || r["decidedAt"] == nil || r["turnId"] != asked.TurnID {
		t.Fatalf("expected the approval allowed by the API, got %v", r)
	}
	if d, _ := r["decider"].(map[string]any); d["kind"] != "api" || d["name"] != "test" || !strings.HasPrefix(d["id"].(string), "key_") {
		t.Fatalf("expected the decision to name the API key, got %v", r["decider"])
	}
	hubtest.Decide(t, h, id, asked.ApprovalID, "deny", 409, "approval_not_pending")
	resolved, _ := hubtest.NextOf(t, events, "approval_resolved")
	if resolved.ApprovalID != asked.ApprovalID || resolved.Status != "allowed" || resolved.DecidedBy != "api" ||
		resolved.Decider == nil || resolved.Decider.Name != "test" {
		t.Fatalf("expected the approval resolved allowed, got %+v", resolved)
	}

	second, _ := hubtest.NextOf(t, events, "approval_requested")
	hubtest.Decide(t, h, id, second.ApprovalID, "deny", 200, "")
	hubtest.UntilTurnFinished(t, events)
	hubtest.WaitFor(t, h, id, "idle after the turn", hubtest.IdleAfterTurns(1))
	reply := hubtest.Replies(t, h, id)
	want := `completed: {"type":"approval_resolved","id":"first","decision":"allow"}` + "\n" +
		`{"type":"approval_resolved","id":"second","decision":"deny","reason":"Denied by a person reviewing this workspace."}`
	if len(reply) != 1 || reply[0] != want {
		t.Fatalf("expected the agent to have read both decisions, got %q", reply)
	}

	// Bad input.
	hubtest.Decide(t, h, id, "apr_0000000000000000", "allow", 404, "approval_not_found")
	hubtest.Decide(t, h, id, "nonsense", "allow", 404, "approval_not_found")
	hubtest.Decide(t, h, id, second.ApprovalID, "maybe", 400, "invalid_request")
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
	id := hubtest.CreateOn(t, h, "local", "", "runtimeMode", "approval-required")
	events, drop := hubtest.Stream(t, h, id, "")
	defer drop()

	hubtest.Send(t, h, id, "ask late")
	asked, _ := hubtest.NextOf(t, events, "approval_requested")
	resolved, _ := hubtest.NextOf(t, events, "approval_resolved")
	if resolved.Status != "timed_out" || resolved.ApprovalID != asked.ApprovalID {
		t.Fatalf("expected the approval timed out, got %+v", resolved)
	}
	if waited := time.UnixMilli(resolved.CreatedAt).Sub(time.UnixMilli(asked.CreatedAt)); waited < approvalTimeout-100*time.Millisecond || waited > approvalTimeout+3*time.Second {
		t.Fatalf("expected the timeout after about %s, took %s", approvalTimeout, waited)
	}
	hubtest.UntilTurnFinished(t, events)
	hubtest.WaitFor(t, h, id, "idle after the turn", hubtest.IdleAfterTurns(1))
	if got := hubtest.Replies(t, h, id); len(got) != 1 || !strings.Contains(got[0], `"decision":"deny","reason":"Denied: nobody answered the approval request in time."`) {
		t.Fatalf("expected the agent told of the timeout, got %q", got)
	}
	hubtest.Decide(t, h, id, asked.ApprovalID, "allow", 409, "approval_not_pending")

	hubtest.Send(t, h, id, "ask stopped")
	asked, _ = hubtest.NextOf(t, events, "approval_requested")
	h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+asked.TurnID+"/stop", h.Key, nil).Expect(t, 202, "")
	resolved, _ = hubtest.NextOf(t, events, "approval_resolved")
	finished, _ := hubtest.NextOf(t, events, "turn_finished")
	if resolved.Status != "closed" || resolved.ApprovalID != asked.ApprovalID || finished.Outcome != "interrupted" {
		t.Fatalf("expected the stopped turn's approval closed, got %+v then %+v", resolved, finished)
	}
	hubtest.Decide(t, h, id, asked.ApprovalID, "allow", 409, "approval_not_pending")
}

// Outside the approval-required mode nobody is asked: the agent is denied at once.
func TestApprovalsOutsideTheModeAreDenied(t *testing.T) {
	t.Parallel()
	h := startApprovals(t)
	id := hubtest.CreateOn(t, h, "local", "ask x")
	hubtest.WaitFor(t, h, id, "idle after the turn", hubtest.IdleAfterTurns(1))
	if got := hubtest.Replies(t, h, id); len(got) != 1 || !strings.Contains(got[0], `"decision":"deny","reason":"Denied: nobody answers approvals in this runtime mode."`) {
		t.Fatalf("expected the ask denied at once, got %q", got)
	}
	for _, e := range hubtest.EventsPage(t, h, id, 0) {
		if strings.HasPrefix(e.Type, "approval") {
			t.Fatalf("expected no approval events, got %v", e)
		}
	}
}

// An ask shows the tool's whole input (the turn event and the webhook event), its
// summary marked as cut, and an Allow answers with the hash of exactly that input.
// On the local provider and across the runtime API (process).
func TestApprovalsShowTheWholeInputAndAllowBindsItsHash(t *testing.T) {
	t.Parallel()
	onEachProvider(t, wholeInput)
}

func wholeInput(t *testing.T, h *hubtest.Hub, provider string) {
	rc, secret, id, events := askingTurn(t, h, provider, "run "+hubtest.HiddenTail)

	asked, _ := hubtest.NextOf(t, events, "approval_requested")
	hash := hubtest.CommandHash(hubtest.HiddenTail)
	var input map[string]string
	if err := json.Unmarshal(asked.Input, &input); err != nil || input["command"] != hubtest.HiddenTail || asked.InputSHA256 != hash {
		t.Fatalf("expected the event to carry the whole command and the hash %s, got %s %s (%v)", hash, asked.Input, asked.InputSHA256, err)
	}
	if n := utf8.RuneCountInString(asked.Summary); n != 300 || !strings.HasSuffix(asked.Summary, "…") {
		t.Fatalf("expected the summary cut to 300 characters and marked with …, got %d: %q", n, asked.Summary)
	}
	got := rc.Wait(t, 1)[0]
	ev, err := webhook.ConstructEvent(got.Body, got.Header.Get(webhook.HeaderSignature), secret)
	if err != nil || ev.InputSHA256 != hash || json.Unmarshal([]byte(ev.Input), &input) != nil || input["command"] != hubtest.HiddenTail {
		t.Fatalf("expected the webhook event to carry the whole input and its hash, got %s (%v)", got.Body, err)
	}

	hubtest.Decide(t, h, id, asked.ApprovalID, "allow", 200, "")
	hubtest.WaitFor(t, h, id, "idle after the turn", hubtest.IdleAfterTurns(1))
	want := `completed: {"type":"approval_resolved","id":"run","decision":"allow","sha256":"` + hash + `"}`
	if reply := hubtest.Replies(t, h, id); len(reply) != 1 || reply[0] != want {
		t.Fatalf("expected the agent told to run the input with hash %s, got %q", hash, reply)
	}
}

// An input too large to show whole is denied without asking anyone, and the events
// say why; asked again with another input under the same id, an allowed ask is
// refused, since that input was never shown.
func TestApprovalsOfInputsNotShownAreRefused(t *testing.T) {
	t.Parallel()
	a := startAsker(t)
	huge := map[string]any{"command": strings.Repeat("x", core.MaxApprovalInput)}
	got := a.call(t, "/turns/"+a.turnID+"/approvals", map[string]any{"key": "huge", "tool": "Bash", "summary": "xxx",
		"input": huge, "waitSeconds": 0}).expect(t, 200).Body
	if got["status"] != "denied" || got["reason"] != core.ReasonInputTooLarge {
		t.Fatalf("expected the huge ask denied as too large, got %v", got)
	}
	var seen []string
	for _, e := range hubtest.EventsPage(t, a.h, a.id, 0) {
		seen = append(seen, e.Type+":"+e.Status+":"+e.Reason)
		if len(e.Input) != 0 {
			t.Fatalf("expected no input on the events of an ask too large to show, got %d bytes", len(e.Input))
		}
	}
	if want := "approval_requested::,approval_resolved:denied:" + core.ReasonInputTooLarge; strings.Join(seen, ",") != want {
		t.Fatalf("expected the events to say why, %q, got %q", want, seen)
	}

	ask := func(command string) map[string]any {
		return a.call(t, "/turns/"+a.turnID+"/approvals", map[string]any{"key": "k", "tool": "Bash", "summary": "ls",
			"input": map[string]any{"command": command}, "waitSeconds": 0}).expect(t, 200).Body
	}
	first := ask("ls")
	hubtest.Decide(t, a.h, a.id, first["approvalId"].(string), "allow", 200, "")
	if again := ask("ls"); again["allow"] != true || again["inputSha256"] == "" {
		t.Fatalf("expected the shown input allowed with its hash, got %v", again)
	}
	if other := ask("rm -rf /"); other["allow"] != false || !strings.Contains(other["reason"].(string), "differs") {
		t.Fatalf("expected another input under the allowed id refused, got %v", other)
	}
}
