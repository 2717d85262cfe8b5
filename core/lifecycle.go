package core

import (
	"context"
	"errors"
	"time"
)

// StateChange is a workspace's new state with its derived status fields.
type StateChange struct {
	State        WorkspaceState
	StatusCode   string
	StartupPhase string
	RuntimeState string
	At           time.Time
	// CheckoutPath, when set, records where the machine keeps the checkout.
	CheckoutPath string
	// StatusDetail says why the workspace is in this state ("" for most states).
	StatusDetail string
}

func changeTo(state WorkspaceState, statusCode string, now time.Time) StateChange {
	if statusCode == "" {
		statusCode = string(state)
	}
	phase, runtime := statusFor(state)
	return StateChange{State: state, StatusCode: statusCode, StartupPhase: phase, RuntimeState: runtime, At: now}
}

// apply copies a change onto the in-memory workspace the worker keeps stepping.
func (c StateChange) apply(w *Workspace) {
	w.State, w.StatusCode, w.StartupPhase, w.RuntimeState = c.State, c.StatusCode, c.StartupPhase, c.RuntimeState
	w.StatusDetail = c.StatusDetail
	w.StateChangedAt, w.UpdatedAt = c.At, c.At
	if c.CheckoutPath != "" {
		w.CheckoutPath = c.CheckoutPath
	}
}

// LifecycleConfig sets when sweeps move workspaces on.
type LifecycleConfig struct {
	IdleTimeout  time.Duration // ready and idle -> pausing
	ArchiveAfter time.Duration // paused this long -> archiving
	DeleteAfter  time.Duration // archived this long -> deleting
}

// sweepBatch bounds one sweep's work; the next tick takes the rest.
const sweepBatch = 500

// SweepLifecycle pauses idle workspaces, archives long-paused ones and deletes
// long-archived ones. It runs once per tick across replicas (cron).
func (sw *Sweeps) SweepLifecycle(ctx context.Context, cfg LifecycleConfig, tick time.Time) (moved int, err error) {
	s := sw.w
	err = sw.runTick(ctx, "lifecycle", tick, func(q Queries) error {
		moved = 0 // the transaction may run again
		now := s.clock.Now()
		type step struct {
			ids      func() ([]string, error)
			from, to WorkspaceState
		}
		steps := []step{
			{func() ([]string, error) { return q.IdleReadyWorkspaces(ctx, now.Add(-cfg.IdleTimeout), sweepBatch) }, StateReady, StatePausing},
		}
		if cfg.ArchiveAfter > 0 {
			steps = append(steps, step{func() ([]string, error) {
				return q.WorkspacesInStateSince(ctx, StatePaused, now.Add(-cfg.ArchiveAfter), sweepBatch)
			}, StatePaused, StateArchiving})
		}
		if cfg.DeleteAfter > 0 {
			steps = append(steps, step{func() ([]string, error) {
				return q.WorkspacesInStateSince(ctx, StateArchived, now.Add(-cfg.DeleteAfter), sweepBatch)
			}, StateArchived, StateDeleting})
		}
		for _, st := range steps {
			ids, err := st.ids()
			if err != nil {
				return err
			}
			for _, id := range ids {
				ok, err := setState(ctx, q, id, st.from, changeTo(st.to, "", now))
				if err != nil {
					return err
				}
				if ok {
					moved++
				}
			}
		}
		if moved > 0 {
			return wake(ctx, q, WorkChannel, "")
		}
		return nil
	})
	return moved, err
}

// SweepMessages expires messages pending for over 24 hours and fails delivered ones
// whose workspace can no longer answer.
func (sw *Sweeps) SweepMessages(ctx context.Context, tick time.Time) (expired, failed int64, err error) {
	s := sw.w
	err = sw.runTick(ctx, "messages", tick, func(q Queries) error {
		if expired, err = q.ExpirePendingMessages(ctx, s.clock.Now().Add(-MessageExpiry)); err != nil {
			return err
		}
		failed, err = q.FailStrandedMessages(ctx)
		return err
	})
	return expired, failed, err
}

// errTickTaken: another replica holds or ran this tick.
var errTickTaken = errors.New("tick taken")

// runTick runs fn once per (job, tick) across replicas, in the transaction that claims
// the tick, so a tick whose work failed is not marked run.
func (sw *Sweeps) runTick(ctx context.Context, job string, tick time.Time, fn func(q Queries) error) error {
	s := sw.w
	err := s.store.InTx(ctx, func(q Queries) error {
		ok, err := q.ClaimCronTick(ctx, job, tick, s.clock.Now())
		if err != nil {
			return err
		}
		if !ok {
			return errTickTaken
		}
		return fn(q)
	})
	if errors.Is(err, errTickTaken) {
		return nil
	}
	return err
}
