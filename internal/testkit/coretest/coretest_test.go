package coretest_test

import (
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// The harness builds a ready account and project, and a workspace created with a
// prompt goes from queued to ready and answers it, stepped by the test alone: the
// fake machine allocated and checked out, the runner's default echo recorded.
func TestAWorkspaceSettlesWithNoHub(t *testing.T) {
	t.Parallel()
	c := coretest.New(t)
	if c.Project.State != core.ProjectReady || c.Project.DefaultBranch != "main" {
		t.Fatalf("expected a ready project on main, got %s on %q", c.Project.State, c.Project.DefaultBranch)
	}
	ws := c.Create(c.Account, "hello")
	if ws.State != core.StateQueued {
		t.Fatalf("expected the workspace queued, got %s", ws.State)
	}
	if steps := c.Settle(); steps < 4 {
		t.Fatalf("expected the lifecycle's steps and a turn, got %d steps", steps)
	}
	if got := c.Workspace(c.Account, ws.ID); got.State != core.StateReady || got.LastTurnOutcome != core.OutcomeCompleted {
		t.Fatalf("expected the workspace ready after a completed turn, got %s, %q", got.State, got.LastTurnOutcome)
	}
	if ops := c.Machines.Ops(ws.ID); len(ops) != 3 || ops[0] != "allocate" || ops[1] != "checkout" || ops[2] != "commit" {
		t.Fatalf("expected allocate, checkout and the turn's commit, got %v", ops)
	}
	if msgs := c.Messages(c.Account, ws.ID); len(msgs) != 2 || msgs[1].Text != "echo: hello" {
		t.Fatalf("expected the runner's echo recorded, got %d messages", len(msgs))
	}
}

// Advancing the clock wakes core's waits, whose timers run on real time: an approval
// asked with the default timeout (ten minutes) times out as soon as the clock passes
// its expiry, not when its poll comes round (every 2 s: the bound below is under it,
// with room for a loaded machine).
func TestAdvancingTheClockWakesAWaitThatIsDue(t *testing.T) {
	t.Parallel()
	c := coretest.New(t)
	c.Runner.Play("ask", coretest.Ask(core.ApprovalAsk{Key: "k", Tool: "Bash", Summary: "ls"}))
	ws, err := c.TryCreate(c.Account, "ask", core.ModeApprovalRequired)
	if err != nil {
		t.Fatal(err)
	}
	events := c.Events(c.Account, ws.ID)
	done := c.SettleInBackground()
	events.Next(core.EventApprovalRequested)
	start := time.Now()
	c.Clock.Advance(core.DefaultApprovalTimeout)
	resolved, _ := events.Next(core.EventApprovalResolved)
	coretest.Await(t, done, "the turn settled")
	if resolved.Status != core.ApprovalTimedOut || time.Since(start) > 1500*time.Millisecond {
		t.Fatalf("expected the approval timed out at once, got %s after %s", resolved.Status, time.Since(start))
	}
}
