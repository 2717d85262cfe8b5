package core_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// conversation is a workspace's messages as "role:text:status", in seq order.
func conversation(msgs []*core.Message) string {
	var b []string
	for _, m := range msgs {
		b = append(b, fmt.Sprintf("%s:%s:%s", m.Role, m.Text, m.Status))
	}
	return strings.Join(b, " ")
}

// turns pairs each user message with the replies of its turn, in the order sent:
// "text -> reply (outcome)", or "text -> none" while it has none.
func turns(msgs []*core.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role != core.RoleUser {
			continue
		}
		line := m.Text + " ->"
		for _, r := range msgs {
			if r.Role == core.RoleAssistant && r.TurnID == m.TurnID {
				line += fmt.Sprintf(" %s (%s)", r.Text, r.Outcome)
			}
		}
		if !strings.Contains(line, "(") {
			line += " none"
		}
		out = append(out, line)
	}
	return out
}

// prompts are the prompts of the turns the runner played in a workspace, in order.
func prompts(c *coretest.Core, wsID string) string {
	var out []string
	for _, turn := range c.Runner.Played() {
		if turn.Req.WorkspaceID == wsID {
			out = append(out, turn.Req.Prompt)
		}
	}
	return strings.Join(out, ",")
}

// sendingAndSettling: the queue, the claim, the turn, each message settled once, in
// order.
var sendingAndSettling = []coretest.Case{
	{Name: "messages are answered one turn each in the order sent", Test: messagesAnsweredInOrder},
	{Name: "a send repeated with its key queues one turn", Test: repeatedSendOneTurn},
	{Name: "a turn lost with its lease is ended once by the next claim", Test: turnLostWithItsLease},
	{Name: "a turn says whether another message waits", Test: turnSaysWhetherMoreWaits},
}

// A turn tells the worker whether another of the workspace's messages waits, as its
// record read it: with none, the worker lets go of the workspace at once, rather than
// step it again to find nothing.
func turnSaysWhetherMoreWaits(t *testing.T, c *coretest.Core) {
	ws := c.Create(c.Account, "first")
	c.Settle()
	c.Send(c.Account, ws.ID, "two")
	c.Send(c.Account, ws.ID, "three")
	claimed := c.Claim(1)
	if len(claimed) != 1 || claimed[0].ID != ws.ID {
		t.Fatalf("expected %s claimed, got %d workspaces", ws.ID, len(claimed))
	}
	defer c.Release(claimed[0])
	for _, want := range []bool{true, false} {
		if more := c.Step(claimed[0]); more != want {
			t.Fatalf("expected the turn after %s to say more waits: %v, got %v", prompts(c, ws.ID), want, more)
		}
	}
	if got := prompts(c, ws.ID); got != "first,two,three" {
		t.Fatalf("expected a turn for each message, got %s", got)
	}
}

// Messages wait in the queue, in the order sent, until the worker takes them: one
// turn each, strictly in seq order, each user message settled by its own reply,
// which carries its turn id. Nothing is left to claim after.
func messagesAnsweredInOrder(t *testing.T, c *coretest.Core) {
	ws := c.Create(c.Account, "one")
	for i, text := range []string{"two", "three"} {
		r := c.Send(c.Account, ws.ID, text)
		if r.Status != "queued" || r.Seq != int64(i+2) {
			t.Fatalf("expected %q queued as seq %d, got %+v", text, i+2, r)
		}
	}
	if got := conversation(c.Messages(c.Account, ws.ID)); got != "user:one:pending user:two:pending user:three:pending" {
		t.Fatalf("expected three messages waiting, got %s", got)
	}

	c.Settle()
	if got := prompts(c, ws.ID); got != "one,two,three" {
		t.Fatalf("expected one turn per message in the order sent, got %q", got)
	}
	msgs := c.Messages(c.Account, ws.ID)
	want := "one -> echo: one (completed)|two -> echo: two (completed)|three -> echo: three (completed)"
	if got := strings.Join(turns(msgs), "|"); got != want {
		t.Fatalf("expected each message answered once in its turn,\n  %s\ngot\n  %s", want, got)
	}
	for _, m := range msgs {
		if m.Status != core.MessageSettled || m.Role == core.RoleUser && m.DeliveredAt == nil {
			t.Fatalf("expected every message delivered and settled, got %s %s (delivered %v)", m.Text, m.Status, m.DeliveredAt)
		}
	}
	if left := c.Claim(10); len(left) != 0 {
		t.Fatalf("expected nothing left to claim, got %d workspaces", len(left))
	}
	if ws := c.Workspace(c.Account, ws.ID); ws.State != core.StateReady || ws.LastTurnID != msgs[2].TurnID {
		t.Fatalf("expected the workspace ready after its last turn %s, got %s after %s", msgs[2].TurnID, ws.State, ws.LastTurnID)
	}
}

// A message sent again with its idempotency key is the same message: one turn.
func repeatedSendOneTurn(t *testing.T, c *coretest.Core) {
	ws := c.Create(c.Account, "")
	first, err := c.TrySend(c.Account, ws.ID, "once", "key-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.TrySend(c.Account, ws.ID, "once", "key-1")
	if err != nil || again.MessageID != first.MessageID {
		t.Fatalf("expected the repeat to answer message %s, got %+v (%v)", first.MessageID, again, err)
	}
	if _, err := c.TrySend(c.Account, ws.ID, "other text", "key-1"); core.ErrorCode(err) != core.CodeIdempotencyKeyReused {
		t.Fatalf("expected the key with another text refused %s, got %v", core.CodeIdempotencyKeyReused, err)
	}
	c.Settle()
	if got := prompts(c, ws.ID); got != "once" {
		t.Fatalf("expected one turn, got %q", got)
	}
	if got := conversation(c.Messages(c.Account, ws.ID)); got != "user:once:settled assistant:echo: once:settled" {
		t.Fatalf("expected one message and its reply, got %s", got)
	}
}

// A turn whose worker lost its lease is not recorded by it; the next claim ends it,
// interrupted, once, and never runs its agent again; the queue then moves on.
func turnLostWithItsLease(t *testing.T, c *coretest.Core) {
	started := make(chan struct{})
	c.Runner.Play("long", coretest.Hold(started, nil))
	ws := c.Create(c.Account, "long")
	c.Send(c.Account, ws.ID, "next")
	claimed := c.Claim(1)[0]
	for claimed.State != core.StateReady {
		c.Step(claimed)
	}
	ctx, lose := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.StepContext(ctx, claimed) }()
	coretest.Await(t, started, "the turn started")
	lose(core.ErrLeaseLost)
	coretest.Await(t, done, "the step returned")
	if got := conversation(c.Messages(c.Account, ws.ID)); got != "user:long:delivered user:next:pending" {
		t.Fatalf("expected the lost turn left delivered and nothing recorded, got %s", got)
	}

	c.Release(claimed)
	c.Settle()
	msgs := c.Messages(c.Account, ws.ID)
	got := turns(msgs)
	if len(got) != 2 || !strings.HasPrefix(got[0], "long -> The turn was interrupted") || !strings.HasSuffix(got[0], "(interrupted)") ||
		got[1] != "next -> echo: next (completed)" {
		t.Fatalf("expected the lost turn ended interrupted once, then the next answered, got %q", got)
	}
	if got := prompts(c, ws.ID); got != "long,next" {
		t.Fatalf("expected the lost turn's agent run once, got %q", got)
	}
}
