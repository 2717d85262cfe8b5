// Package jobs runs the hub's background work through core: the workspace worker
// (lifecycle transitions and agent turns) and the cron sweeps.
package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/wshub/wshub/core"
)

// Worker claims workspaces that need work and steps them, a bounded number at a
// time. Each claim is a lease renewed by a heartbeat; a worker that dies stops
// renewing, and after LeaseFor another worker (or this one after restart) claims the
// workspace and recovers it.
type Worker struct {
	Core  WorkerCore
	Waker Waker
	Log   *slog.Logger
	// Concurrency bounds the workspaces worked on at once (default 4).
	Concurrency int
	// LeaseFor is how long a claim lasts without renewal (default 30 s); the heartbeat
	// renews it every LeaseFor/3.
	LeaseFor time.Duration
	// Poll is the backstop interval when no wake-up arrives (default 2 s).
	Poll time.Duration
}

func (w *Worker) defaults() {
	if w.Concurrency <= 0 {
		w.Concurrency = 4
	}
	if w.LeaseFor <= 0 {
		w.LeaseFor = 30 * time.Second
	}
	if w.Poll <= 0 {
		w.Poll = 2 * time.Second
	}
	if w.Log == nil {
		w.Log = slog.Default()
	}
}

// Run works until ctx ends, then waits for the workspaces in hand: their turns are
// interrupted and recorded before Run returns.
func (w *Worker) Run(ctx context.Context) {
	w.defaults()
	claimLoop(ctx, w.Concurrency, w.Waker, core.WorkChannel, w.Poll, func(free int) []claimedWorkspace {
		// Taken before the database's now() that starts the lease, so the claim surely
		// holds until at+LeaseFor, whatever the database's clock says.
		at := time.Now()
		claimed, err := w.Core.ClaimWork(ctx, w.LeaseFor, free)
		if err != nil && ctx.Err() == nil {
			w.Log.Warn("claim workspaces", "err", err) // fail open: the next poll retries
		}
		out := make([]claimedWorkspace, len(claimed))
		for i, ws := range claimed {
			out[i] = claimedWorkspace{ws: ws, at: at}
		}
		return out
	}, func(c claimedWorkspace) { w.work(ctx, c) })
}

// claimedWorkspace is one claim: the workspace (its LeaseToken is the claim's token)
// and when the lease surely started.
type claimedWorkspace struct {
	ws *core.Workspace
	at time.Time
}

// work steps one leased workspace until it has no more work, then lets it go.
func (w *Worker) work(ctx context.Context, c claimedWorkspace) {
	ws, token := c.ws, c.ws.LeaseToken
	stepCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hb := &heartbeat{w: w, id: ws.ID, token: token, renewed: c.at, claimedState: ws.State, cancel: cancel}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() { defer close(stopped); hb.run(ctx, done) }()
	defer func() {
		close(done)
		<-stopped
		if !hb.lost {
			w.release(ctx, ws.ID, token, hb.renewed.Add(w.LeaseFor))
		}
	}()
	for stepCtx.Err() == nil {
		hb.setState(ws.State)
		turn := ws.State == core.StateReady
		more, err := w.Core.StepWorkspace(stepCtx, ws, token)
		if err != nil {
			if ctx.Err() == nil {
				w.Log.Warn("step workspace", "workspace", ws.ID, "state", ws.State, "err", err)
			}
			return
		}
		// A workspace that just became ready goes back to the claim for its first turn,
		// which the claim gives fairly and within its account's quota of running turns;
		// after a turn it goes back only when another account waits.
		if !more || !turn && ws.State == core.StateReady || turn && w.yield(stepCtx, ws) {
			return
		}
	}
}

// yield reports whether to let ws go after a turn, its next message still waiting,
// because another account waits for a slot: the claim then gives the slot to the
// account furthest below its share (fair_claim.go), and ws waits its turn like any
// other. Without this, a workspace with a backlog would keep its slot until the
// backlog is done.
func (w *Worker) yield(ctx context.Context, ws *core.Workspace) bool {
	other, err := w.Core.ShouldYield(ctx, ws)
	if err != nil && ctx.Err() == nil {
		w.Log.Warn("fair share check", "workspace", ws.ID, "err", err) // keep the slot: the next turn still runs
	}
	return other
}

// release lets go of a claim, so the workspace's next work is claimed at once rather
// than when the lease runs out. While the store is unreachable it keeps trying until
// the lease would have run out by itself (heldUntil) or the hub stops.
func (w *Worker) release(ctx context.Context, id, token string, heldUntil time.Time) {
	wait := 100 * time.Millisecond
	for {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.LeaseFor/3)
		err := w.Core.ReleaseLease(rctx, id, token)
		cancel()
		if err == nil {
			return
		}
		if ctx.Err() != nil || time.Now().Add(wait).After(heldUntil) {
			w.Log.Warn("release lease", "workspace", id, "err", err) // it runs out by itself
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
	}
}
