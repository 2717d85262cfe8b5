package coretest

import (
	"context"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// LeaseFor is the lease of the harness's claims: long enough that none runs out
// within a test, for nothing renews it.
const LeaseFor = time.Minute

// maxSteps bounds Settle: a workspace stepped more often than this within one test is
// a loop, not work.
const maxSteps = 200

// Claim claims up to limit workspaces that need work, as a worker with limit free
// slots does; each holds its lease until Release (or Run).
func (c *Core) Claim(limit int) []*core.Workspace {
	c.t.Helper()
	ws, err := c.Worker.ClaimWork(context.Background(), LeaseFor, limit)
	if err != nil {
		c.t.Errorf("claim work: %v", err)
	}
	return ws
}

// Step does the next piece of work of a claimed workspace (a lifecycle transition,
// or a whole turn) and reports whether more may wait. An error fails the test (it
// may be called from another goroutine than the test's).
func (c *Core) Step(ws *core.Workspace) bool {
	return c.StepContext(context.Background(), ws)
}

// StepContext is Step under ctx: a test cancels it as the worker's heartbeat does
// (with the cause core.ErrLeaseLost, when its lease is gone). An error the cancel
// caused is not a failure.
func (c *Core) StepContext(ctx context.Context, ws *core.Workspace) bool {
	more, err := c.Worker.StepWorkspace(ctx, ws, ws.LeaseToken)
	if err != nil && ctx.Err() == nil {
		c.t.Errorf("step workspace %s (%s): %v", ws.ID, ws.State, err)
	}
	return more && err == nil
}

// Release lets go of a claimed workspace.
func (c *Core) Release(ws *core.Workspace) {
	if err := c.Worker.ReleaseLease(context.Background(), ws.ID, ws.LeaseToken); err != nil {
		c.t.Errorf("release workspace %s: %v", ws.ID, err)
	}
}

// Run steps a claimed workspace until it has no more work, then releases it: the
// worker's loop, without its lease renewal (the lease outlasts the test) and without
// yielding to other accounts (the test decides the order). It returns the steps.
func (c *Core) Run(ws *core.Workspace) int {
	defer c.Release(ws)
	n := 1
	for ; c.Step(ws) && n < maxSteps; n++ {
	}
	return n
}

// Settle claims one workspace at a time and runs it, until no claim finds work; it
// returns the steps taken. Turns whose script holds them keep Settle waiting: run it
// in a goroutine of its own then.
func (c *Core) Settle() int {
	steps := 0
	for steps < maxSteps {
		claimed := c.Claim(1)
		if len(claimed) == 0 {
			return steps
		}
		steps += c.Run(claimed[0])
	}
	c.t.Errorf("work did not settle within %d steps", maxSteps)
	return steps
}

// SettleInBackground runs Settle in a goroutine of its own, for turns the test holds
// or answers meanwhile; the channel is closed when Settle returns.
func (c *Core) SettleInBackground() <-chan struct{} {
	done := make(chan struct{})
	go func() { defer close(done); c.Settle() }()
	return done
}

// Await waits until ch is closed (or sends), failing t when it has not within
// eventWait: what it waits for comes in milliseconds, or never.
func Await(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(eventWait):
		t.Fatalf("%s: not within %s", what, eventWait)
	}
}
