package jobs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/wshub/wshub/core"
)

// errWorkspaceMoved cancels a running turn whose workspace an operator or a sweep moved
// on (pausing, archiving, deleting): the turn is interrupted and still recorded.
var errWorkspaceMoved = errors.New("the workspace moved on")

// heartbeat keeps one workspace claim: it renews the lease every LeaseFor/3 and stops
// the step when it must:
//   - the lease is gone (another claim took it): at once, with core.ErrLeaseLost;
//   - renewals have failed (store unreachable) for a whole lease: the lease may have
//     run out and another claim may hold it, so with core.ErrLeaseLost too;
//   - a turn is running and the workspace moved on: with errWorkspaceMoved.
//
// Durations are measured on this process's monotonic clock, from the moment a renewal
// was sent: the database starts the new lease after that, so the lease surely lasts
// LeaseFor from then, whatever either wall clock says.
type heartbeat struct {
	w         *Worker
	id, token string
	cancel    context.CancelCauseFunc

	mu           sync.Mutex
	claimedState core.WorkspaceState // the state the step in progress started from

	// Written by run only, read by work after run has returned.
	renewed time.Time // when the last successful renewal (or the claim) was sent
	lost    bool
}

func (h *heartbeat) setState(state core.WorkspaceState) {
	h.mu.Lock()
	h.claimedState = state
	h.mu.Unlock()
}

// run renews until done closes or the lease is lost.
func (h *heartbeat) run(ctx context.Context, done <-chan struct{}) {
	leaseFor := h.w.LeaseFor
	t := time.NewTicker(leaseFor / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		sent := time.Now()
		// Renewals go on while a cancelled turn is being recorded (shutdown), so they
		// do not take ctx's cancellation; each is bounded so a hung connection cannot
		// stall the count.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaseFor/3)
		state, ok, err := h.w.Core.RenewLease(rctx, h.id, h.token, leaseFor)
		cancel()
		switch {
		case err != nil && time.Since(h.renewed) < leaseFor:
			h.w.Log.Warn("renew lease", "workspace", h.id, "err", err) // the next tick tries again
			continue
		case err != nil:
			h.w.Log.Warn("lease lost: not renewed for a whole lease", "workspace", h.id, "err", err)
		case !ok:
			h.w.Log.Warn("lease lost: another claim took the workspace", "workspace", h.id)
		default:
			h.renewed = sent
			h.mu.Lock()
			running := h.claimedState
			h.mu.Unlock()
			// A turn, or an environment script (setup, update), stops when the
			// workspace moved on under it (paused, archived, deleted).
			if (running == core.StateReady || running == core.StateSetup || running == core.StateResuming) && state != running {
				h.cancel(errWorkspaceMoved)
			}
			continue
		}
		h.lost = true
		h.cancel(core.ErrLeaseLost)
		return
	}
}
