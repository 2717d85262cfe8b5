package core_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// approvals: asked, allowed or denied by a person, timed out, closed with their turn,
// never asked outside their mode.
var approvals = []coretest.Case{
	{Name: "a person's decisions reach the agent, each taken once", Test: approvalsDecided},
	{Name: "an approval nobody answers is denied when it times out", Test: approvalTimesOut},
	{Name: "a stopped turn's open approval is closed", Test: approvalClosedWithItsTurn},
	{Name: "outside the approval-required mode nobody is asked", Test: approvalsOutsideTheMode},
}

// askFor is an ask of the Bash tool to run command, with its whole input.
func askFor(key, command string) core.ApprovalAsk {
	input, _ := json.Marshal(map[string]string{"command": command})
	return core.ApprovalAsk{Key: key, Tool: "Bash", Summary: command, Input: input}
}

// askingTurn starts, in the background, an approval-required workspace's turn of
// prompt; it returns the workspace, its event stream and a channel closed once the
// work has settled.
func askingTurn(t *testing.T, c *coretest.Core, prompt string) (*core.Workspace, *coretest.Events, <-chan struct{}) {
	t.Helper()
	ws, err := c.TryCreate(c.Account, prompt, core.ModeApprovalRequired)
	if err != nil {
		t.Fatal(err)
	}
	return ws, c.Events(c.Account, ws.ID), c.SettleInBackground()
}

// answers are the answers the turn of prompt got, in order.
func answers(c *coretest.Core, prompt string) []core.ApprovalAnswer {
	for _, turn := range c.Runner.Played() {
		if turn.Req.Prompt == prompt {
			return turn.Answers
		}
	}
	return nil
}

func decide(c *coretest.Core, ws *core.Workspace, approvalID, decision string) (*core.Approval, error) {
	return c.Workspaces.DecideApproval(context.Background(), c.Account, ws.ID, approvalID, decision)
}

// Each ask is an approval_requested event (with the whole input and its hash) and a
// webhook event; a person's allow reaches the agent with the input's hash, a deny
// with its reason; a second decision is refused; asked again under its key, a decided
// approval answers the same without asking anyone.
func approvalsDecided(t *testing.T, c *coretest.Core) {
	first := askFor("first", "rm -rf first")
	c.Runner.Play("ask twice", coretest.Ask(first), coretest.Ask(askFor("second", "rm -rf second")),
		coretest.Ask(first), coretest.Reply("done"))
	ws, events, done := askingTurn(t, c, "ask twice")

	asked, _ := events.Next(core.EventApprovalRequested)
	canon, _ := core.CanonicalInput(first.Input)
	if asked.Tool != "Bash" || asked.Summary != "rm -rf first" || string(asked.Input) != string(canon) ||
		asked.InputSHA256 != core.InputHash(canon) {
		t.Fatalf("expected the ask shown whole with its hash, got %+v", asked)
	}
	a, err := decide(c, ws, asked.ApprovalID, core.DecisionAllow)
	if err != nil || a.Status != core.ApprovalAllowed || a.DecidedBy != "api" {
		t.Fatalf("expected the approval allowed by the API, got %+v (%v)", a, err)
	}
	if _, err := decide(c, ws, asked.ApprovalID, core.DecisionDeny); core.ErrorCode(err) != core.CodeApprovalNotPending {
		t.Fatalf("expected a second decision refused %s, got %v", core.CodeApprovalNotPending, err)
	}
	if resolved, _ := events.Next(core.EventApprovalResolved); resolved.ApprovalID != asked.ApprovalID || resolved.Status != core.ApprovalAllowed {
		t.Fatalf("expected the approval resolved allowed, got %+v", resolved)
	}
	second, _ := events.Next(core.EventApprovalRequested)
	if _, err := decide(c, ws, second.ApprovalID, core.DecisionDeny); err != nil {
		t.Fatal(err)
	}
	coretest.Await(t, done, "the turn settled")

	got := answers(c, "ask twice")
	if len(got) != 3 || !got[0].Allow || got[0].InputSHA256 != core.InputHash(canon) || got[0].ApprovalID != asked.ApprovalID ||
		got[1].Allow || got[1].Reason != "Denied by a person reviewing this workspace." ||
		got[2].ApprovalID != asked.ApprovalID || !got[2].Allow {
		t.Fatalf("expected allow (with the hash), deny, and the first allow again, got %+v", got)
	}
	if got := turns(c.Messages(c.Account, ws.ID)); len(got) != 1 || got[0] != "ask twice -> done (completed)" {
		t.Fatalf("expected the turn to go on after the decisions, got %q", got)
	}
	var kinds []string
	for _, e := range deliveredFor(t, c, ws.ID) {
		kinds = append(kinds, e.Type)
	}
	if want := "workspace.approval.requested workspace.approval.requested workspace.turn.completed"; strings.Join(kinds, " ") != want {
		t.Fatalf("expected the webhook events %s, got %s", want, kinds)
	}
}

// An approval nobody answers is denied once the clock passes its expiry (the hub's
// timeout), and a decision after that is refused.
func approvalTimesOut(t *testing.T, c *coretest.Core) {
	c.Runner.Play("ask late", coretest.Ask(askFor("late", "ls")), coretest.Reply("done"))
	ws, events, done := askingTurn(t, c, "ask late")
	asked, _ := events.Next(core.EventApprovalRequested)
	// A moment before its expiry, a decision is still taken.
	c.Clock.Advance(core.DefaultApprovalTimeout - time.Millisecond)
	if a, err := decide(c, ws, asked.ApprovalID, core.DecisionAllow); err != nil || a.Status != core.ApprovalAllowed {
		t.Fatalf("expected a decision a moment before the expiry taken, got %+v (%v)", a, err)
	}
	coretest.Await(t, done, "the turn settled")

	c.Runner.Play("ask later", coretest.Ask(askFor("later", "ls")), coretest.Reply("done"))
	c.Send(c.Account, ws.ID, "ask later")
	done2 := c.SettleInBackground()
	asked, _ = events.Next(core.EventApprovalRequested)
	c.Clock.Advance(core.DefaultApprovalTimeout)
	resolved, _ := events.Next(core.EventApprovalResolved)
	coretest.Await(t, done2, "the second turn settled")
	if resolved.ApprovalID != asked.ApprovalID || resolved.Status != core.ApprovalTimedOut {
		t.Fatalf("expected the approval timed out, got %+v", resolved)
	}
	if got := answers(c, "ask later"); len(got) != 1 || got[0].Allow || got[0].Reason != "Denied: nobody answered the approval request in time." {
		t.Fatalf("expected the agent told of the timeout, got %+v", got)
	}
	if _, err := decide(c, ws, asked.ApprovalID, core.DecisionAllow); core.ErrorCode(err) != core.CodeApprovalNotPending {
		t.Fatalf("expected a decision after the timeout refused %s, got %v", core.CodeApprovalNotPending, err)
	}
}

// Stopping a turn that waits for a decision closes its approval and ends the turn
// interrupted; a decision after is refused.
func approvalClosedWithItsTurn(t *testing.T, c *coretest.Core) {
	c.Runner.Play("ask stopped", coretest.Ask(askFor("stopped", "ls")), coretest.Reply("not reached"))
	ws, events, done := askingTurn(t, c, "ask stopped")
	asked, _ := events.Next(core.EventApprovalRequested)
	if running, err := c.Workspaces.StopTurn(context.Background(), c.Account, ws.ID, asked.TurnID); err != nil || !running {
		t.Fatalf("expected the stop taken, got %v (%v)", running, err)
	}
	resolved, _ := events.Next(core.EventApprovalResolved)
	finished, _ := events.Next(core.EventTurnFinished)
	coretest.Await(t, done, "the turn settled")
	if resolved.ApprovalID != asked.ApprovalID || resolved.Status != core.ApprovalClosed || finished.Outcome != core.OutcomeInterrupted {
		t.Fatalf("expected the approval closed and the turn interrupted, got %+v then %+v", resolved, finished)
	}
	if _, err := decide(c, ws, asked.ApprovalID, core.DecisionAllow); core.ErrorCode(err) != core.CodeApprovalNotPending {
		t.Fatalf("expected a decision after the turn refused %s, got %v", core.CodeApprovalNotPending, err)
	}
}

// Outside the approval-required mode the agent has no one to ask: its turn gets no
// approver, and no approval is recorded.
func approvalsOutsideTheMode(t *testing.T, c *coretest.Core) {
	c.Runner.Play("ask unasked", coretest.Ask(askFor("unasked", "ls")), coretest.Reply("done"))
	ws := c.Create(c.Account, "ask unasked")
	c.Settle()
	for _, turn := range c.Runner.Played() {
		if turn.Req.WorkspaceID == ws.ID && turn.Req.Approve != nil {
			t.Fatalf("expected no approver outside the mode (%s)", turn.Req.RuntimeMode)
		}
	}
	got, _ := turnEvents(t, c, ws.ID)
	if strings.Join(got, " ") != "turn_finished:completed" {
		t.Fatalf("expected no approval events, got %s", got)
	}
}
