package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// turnEvents are a workspace's turn events as "type" or "type:detail", in order.
func turnEvents(t *testing.T, c *coretest.Core, wsID string) ([]string, []*core.TurnEvent) {
	t.Helper()
	events, err := c.Workspaces.ListTurnEvents(context.Background(), c.Account, wsID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range events {
		detail := e.Tool + e.Delta + string(e.Outcome) + string(e.Status)
		if detail != "" {
			detail = ":" + detail
		}
		out = append(out, string(e.Type)+detail)
	}
	return out, events
}

// webhookEvent is a delivered webhook event's body.
type webhookEvent struct {
	Type        string `json:"type"`
	WorkspaceID string `json:"workspaceId"`
	TurnID      string `json:"turnId"`
	Outcome     string `json:"outcome"`
	Reply       struct {
		Text string `json:"text"`
	} `json:"reply"`
	PullRequest *core.PullRequestRef `json:"pullRequest"`
	Origin      string               `json:"origin"`
	StartedBy   *struct {
		Kind, ID, Name string
	} `json:"startedBy"`
}

// deliveredFor delivers every webhook event due and returns those of one workspace.
func deliveredFor(t *testing.T, c *coretest.Core, wsID string) []webhookEvent {
	t.Helper()
	var out []webhookEvent
	for _, e := range decodeEvents(t, c.Deliver()) {
		if e.WorkspaceID == wsID {
			out = append(out, e)
		}
	}
	return out
}

func decodeEvents(t *testing.T, bodies []string) []webhookEvent {
	t.Helper()
	out := make([]webhookEvent, len(bodies))
	for i, b := range bodies {
		if err := json.Unmarshal([]byte(b), &out[i]); err != nil {
			t.Fatalf("webhook event %s: %v", b, err)
		}
	}
	return out
}

// recordingATurn: its events, reply and outcome, whichever way it ends.
var recordingATurn = []coretest.Case{
	{Name: "a turn is recorded with its events, reply and outcome", Test: turnRecordedWhole},
	{Name: "a failed turn is recorded with its failure and the queue moves on", Test: failedTurnRecorded},
	{Name: "a stopped turn ends interrupted", Test: stoppedTurnInterrupted},
	{Name: "a turn stopped before it was taken ends interrupted without its agent", Test: stoppedBeforeTaken},
}

// A turn is recorded whole: the agent's steps as turn events in the order it
// reported them, then turn_finished; its reply as the assistant message; the
// workspace's last turn; and one workspace.turn.completed webhook event with the reply.
// The agent was asked with the workspace's agent, model, checkout and prompt.
func turnRecordedWhole(t *testing.T, c *coretest.Core) {
	c.Runner.Play("build",
		coretest.Event(core.TurnEvent{Type: core.EventToolStarted, Tool: "Bash", Summary: "make"}),
		coretest.Event(core.TurnEvent{Type: core.EventToolFinished, Tool: "Bash", Summary: "make"}),
		coretest.Say("building"),
		coretest.Reply("built"))
	ws := c.Create(c.Account, "build")
	c.Settle()

	msgs := c.Messages(c.Account, ws.ID)
	if got := turns(msgs); len(got) != 1 || got[0] != "build -> built (completed)" {
		t.Fatalf("expected the reply recorded, got %q", got)
	}
	turn := msgs[0].TurnID
	got, events := turnEvents(t, c, ws.ID)
	if want := "tool_started:Bash tool_finished:Bash text:building turn_finished:completed"; strings.Join(got, " ") != want {
		t.Fatalf("expected the events %s, got %s", want, got)
	}
	for _, e := range events {
		if e.TurnID != turn || e.WorkspaceID != ws.ID {
			t.Fatalf("expected every event of turn %s, got %+v", turn, e)
		}
	}
	after := c.Workspace(c.Account, ws.ID)
	if after.LastTurnID != turn || after.LastTurnOutcome != core.OutcomeCompleted || after.LastTurnCompletedAt == nil {
		t.Fatalf("expected the workspace's last turn %s completed, got %s %s", turn, after.LastTurnID, after.LastTurnOutcome)
	}
	hooks := deliveredFor(t, c, ws.ID)
	if len(hooks) != 1 || hooks[0].Type != "workspace.turn.completed" || hooks[0].TurnID != turn ||
		hooks[0].Outcome != "completed" || hooks[0].Reply.Text != "built" {
		t.Fatalf("expected one turn.completed event with the reply, got %+v", hooks)
	}
	var req core.TurnRequest
	for _, turn := range c.Runner.Played() {
		if turn.Req.WorkspaceID == ws.ID {
			req = turn.Req
		}
	}
	if req.Agent != "agent_1" || req.Model != "test-model" || req.Dir != after.CheckoutPath || req.TurnID != turn || req.Branch != ws.Branch {
		t.Fatalf("expected the agent asked with the workspace's settings, got %+v", req)
	}
}

// A turn the agent fails ends in error with its failure kept (code and message), its
// events end turn_finished:error, and the queue moves on to the next message.
func failedTurnRecorded(t *testing.T, c *coretest.Core) {
	c.Runner.Play("break", coretest.Say("trying"), coretest.Fail(core.FailureAgentError, "boom"))
	ws := c.Create(c.Account, "break")
	c.Send(c.Account, ws.ID, "again")
	c.Settle()

	msgs := c.Messages(c.Account, ws.ID)
	got := turns(msgs)
	if len(got) != 2 || !strings.HasSuffix(got[0], "(error)") || got[1] != "again -> echo: again (completed)" {
		t.Fatalf("expected the failed turn, then the next answered, got %q", got)
	}
	var failure *core.TurnFailure
	for _, m := range msgs {
		if m.Role == core.RoleAssistant && m.TurnID == msgs[0].TurnID {
			failure = m.Failure
		}
	}
	if failure == nil || failure.Code != core.FailureAgentError || failure.Message != "boom" || failure.Agent != "agent_1" {
		t.Fatalf("expected the failure agent_error: boom, got %+v", failure)
	}
	events, _ := turnEvents(t, c, ws.ID)
	if want := "text:trying turn_finished:error turn_finished:completed"; strings.Join(events, " ") != want {
		t.Fatalf("expected the events %s, got %s", want, events)
	}
}

// A running turn asked to stop ends interrupted: its agent's context is cancelled (a
// NOTIFY wakes the turn's watch), and the stop is answered as running.
func stoppedTurnInterrupted(t *testing.T, c *coretest.Core) {
	started := make(chan struct{})
	c.Runner.Play("forever", coretest.Hold(started, nil))
	ws := c.Create(c.Account, "forever")
	done := c.SettleInBackground()
	coretest.Await(t, started, "the turn started")
	turn := c.Messages(c.Account, ws.ID)[0].TurnID
	running, err := c.Workspaces.StopTurn(context.Background(), c.Account, ws.ID, turn)
	if err != nil || !running {
		t.Fatalf("expected the stop taken for a running turn, got %v (%v)", running, err)
	}
	coretest.Await(t, done, "the turn settled")
	if got := turns(c.Messages(c.Account, ws.ID)); fmt.Sprint(got) != "[forever -> stopped (interrupted)]" {
		t.Fatalf("expected the turn interrupted, got %q", got)
	}
}

// A turn asked to stop while it waits in the queue ends interrupted as soon as it is
// taken: its agent never runs, its reply says why, and the queue moves on.
func stoppedBeforeTaken(t *testing.T, c *coretest.Core) {
	ws := c.Create(c.Account, "first")
	c.Settle()
	queued := c.Send(c.Account, ws.ID, "never run")
	c.Send(c.Account, ws.ID, "next")
	running, err := c.Workspaces.StopTurn(context.Background(), c.Account, ws.ID, core.TurnIDFor(queued.MessageID))
	if err != nil || running {
		t.Fatalf("expected the stop taken for a turn not started, got %v (%v)", running, err)
	}
	c.Settle()
	if got := turns(c.Messages(c.Account, ws.ID)); fmt.Sprint(got) != "[first -> echo: first (completed) "+
		"never run -> The turn was stopped before the agent started. (interrupted) next -> echo: next (completed)]" {
		t.Fatalf("expected the stopped turn interrupted before its agent and the next answered, got %q", got)
	}
	if got := prompts(c, ws.ID); got != "first,next" {
		t.Fatalf("expected the agent run for first and next only, got %s", got)
	}
}
