// Package jobs runs the hub's background work through core: the workspace worker
// (lifecycle transitions and agent turns) and the cron sweeps.
package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// Waker delivers a signal whenever work may be waiting (PostgreSQL NOTIFY). Missed
// signals are harmless: the worker also polls.
type Waker interface {
	Wake() <-chan struct{}
}

// Worker claims workspaces that need work and steps them, a bounded number at a
// time. Each claim is a lease renewed by a heartbeat; a worker that dies stops
// renewing, and after LeaseFor another worker (or this one after restart) claims the
// workspace and recovers it.
type Worker struct {
	Service *core.Service
	Waker   Waker
	Log     *slog.Logger
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
	token := w.Service.NewLeaseToken()
	claimLoop(ctx, w.Concurrency, w.Waker, w.Poll, func(free int) []*core.Workspace {
		claimed, err := w.Service.ClaimWork(ctx, token, w.LeaseFor, free)
		if err != nil && ctx.Err() == nil {
			w.Log.Warn("claim workspaces", "err", err) // fail open: the next poll retries
		}
		return claimed
	}, func(ws *core.Workspace) { w.work(ctx, ws, token) })
}

// work steps one leased workspace until it has no more work, then lets it go.
func (w *Worker) work(ctx context.Context, ws *core.Workspace, token string) {
	stepCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	id, claimedState := ws.ID, ws.State // ws itself is rewritten by the step
	done := make(chan struct{})
	go func() { // heartbeat: keep the lease, and stop a turn whose workspace moved on
		t := time.NewTicker(w.LeaseFor / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			state, ok, err := w.Service.RenewLease(context.WithoutCancel(ctx), id, token, w.LeaseFor)
			mu.Lock()
			running := claimedState
			mu.Unlock()
			if err == nil && (!ok || (running == core.StateReady && state != core.StateReady)) {
				cancel()
			}
		}
	}()
	defer func() {
		close(done)
		if err := w.Service.ReleaseLease(context.WithoutCancel(ctx), id, token); err != nil {
			w.Log.Warn("release lease", "workspace", id, "err", err) // expires by itself
		}
	}()
	for stepCtx.Err() == nil {
		mu.Lock()
		claimedState = ws.State
		mu.Unlock()
		more, err := w.Service.StepWorkspace(stepCtx, ws, token)
		if err != nil {
			if ctx.Err() == nil {
				w.Log.Warn("step workspace", "workspace", ws.ID, "state", ws.State, "err", err)
			}
			return
		}
		if !more {
			return
		}
	}
}
