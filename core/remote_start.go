package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxRuntimeStarts is how many times in a row a remote machine is started without its
// runtime ever saying hello before the workspace fails runtime_unreachable.
const MaxRuntimeStarts = 3

// NewRuntimeToken returns a runtime's token: wsrt_ + 43 base62 characters of 32 random
// bytes. Only its hash (HashAPIKey) is kept.
func NewRuntimeToken(r Random) string { return "wsrt_" + encodeBase62(randomBytes(r, 32)) }

// remoteFor returns the remote machines of the workspace's provider (nil: it runs in
// the hub).
func (s *Worker) remoteFor(ws *Workspace) RemoteMachines {
	if s.remote == nil {
		return nil
	}
	return s.remote[ws.ProviderID]
}

// stepRemote is StepWorkspace for a workspace whose runtime runs on its machine: the
// worker starts and stops the machine; the runtime does the rest (remote.go). The
// claim only offers a starting or ready workspace whose machine must be started.
func (s *Worker) stepRemote(ctx context.Context, rm RemoteMachines, ws *Workspace, lease string) (bool, error) {
	switch ws.State {
	case StateQueued, StateProvisioning, StateSetup, StateResuming, StateReady:
		if ws.RuntimeStartedAt != nil {
			return false, nil // started: the runtime moves it on
		}
		return false, s.startRuntime(ctx, rm, ws, lease)
	case StatePausing:
		if err := s.stopRemote(ctx, rm.Stop, ws, lease); err != nil {
			return false, err
		}
		return false, s.transition(ctx, ws, lease, StatePaused, "")
	case StateArchiving:
		if err := s.stopRemote(ctx, rm.Stop, ws, lease); err != nil {
			return false, err
		}
		return false, s.transition(ctx, ws, lease, StateArchived, "")
	case StateDeleting:
		if err := s.stopRemote(ctx, rm.Delete, ws, lease); err != nil {
			return false, err
		}
		if s.branches != nil {
			if err := s.branches.Remove(ctx, ws); err != nil {
				return false, err
			}
		}
		if err := s.deleteBlobs(ctx, ws); err != nil {
			return false, err
		}
		return false, s.transition(ctx, ws, lease, StateDeleted, "")
	}
	return false, nil
}

// replyMachineStopped ends the turn a remote runtime was running when its machine
// was stopped (pause, archive, delete), as the local provider ends it interrupted.
const replyMachineStopped = "The turn was interrupted: the workspace was stopped while the agent was working."

// stopRemote stops (or deletes) the machine, then ends the turn its runtime was
// running, interrupted: that runtime will never report it.
func (s *Worker) stopRemote(ctx context.Context, stop func(context.Context, *Workspace) error, ws *Workspace, lease string) error {
	if err := stop(ctx, ws); err != nil {
		return err
	}
	return s.store.InTx(ctx, func(q Queries) error {
		cur, err := q.LockLeasedWorkspace(ctx, ws.ID, lease)
		if err != nil {
			return fmt.Errorf("lock leased %s: %w", ws.ID, err)
		}
		if err := q.RevokeRuntime(ctx, ws.ID); err != nil {
			return err
		}
		m, err := q.OldestOpenMessage(ctx, ws.ID)
		if errors.Is(err, ErrNoRows) || err == nil && m.Status != MessageDelivered {
			return nil
		}
		if err != nil {
			return err
		}
		return s.recordTurnIn(ctx, q, cur, m, TurnResult{Outcome: OutcomeInterrupted, Reply: replyMachineStopped})
	})
}

// startRuntime mints a token, records it (a queued workspace moves to provisioning),
// then starts the machine with it. The token is stored first, so a runtime that comes
// up at once is known; a start that fails is forgotten so the next claim tries again.
func (s *Worker) startRuntime(ctx context.Context, rm RemoteMachines, ws *Workspace, lease string) error {
	if ws.RuntimeStarts >= MaxRuntimeStarts {
		return s.transitionDetail(ctx, ws, lease, StateFailed, FailureStatus(FailureProvision, ReasonRuntimeUnreachable),
			fmt.Sprintf("the workspace's machine was started %d times and its runtime never reached the hub", ws.RuntimeStarts))
	}
	token := NewRuntimeToken(s.rand)
	from := ws.State
	err := s.store.InTx(ctx, func(q Queries) error {
		cur, err := q.LockLeasedWorkspace(ctx, ws.ID, lease)
		if err != nil {
			return fmt.Errorf("lock leased %s: %w", ws.ID, err)
		}
		if cur.State != from {
			return errStateMoved
		}
		now := s.clock.Now()
		if err := q.StartRuntime(ctx, ws.ID, HashAPIKey(token), now); err != nil {
			return err
		}
		if from == StateQueued {
			change := changeTo(StateProvisioning, "", now)
			if _, err := setState(ctx, q, ws.ID, from, change); err != nil {
				return err
			}
			change.apply(ws)
		}
		return nil
	})
	if err != nil {
		return err
	}
	image, err := environments{s}.machineImage(ctx, ws, lease)
	if err != nil {
		if rerr := s.store.RevokeRuntime(context.WithoutCancel(ctx), ws.ID); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return s.failSetup(ctx, ws, lease, err)
	}
	if err := rm.Start(ctx, ws, token, image); err != nil {
		var se *SetupError
		if errors.As(err, &se) {
			return s.failSetup(ctx, ws, lease, err)
		}
		// Forget the start: the claim's retry starts it again with a new token.
		if rerr := s.store.RevokeRuntime(context.WithoutCancel(ctx), ws.ID); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("start machine of %s: %w", ws.ID, err)
	}
	return nil
}

// deleteBlobs removes a deleted workspace's attachment bytes (its rows stay, like its
// messages, for a deleted workspace answers 404 everywhere) and its kept diffs.
func (s *Worker) deleteBlobs(ctx context.Context, ws *Workspace) error {
	keys, err := s.store.AssetBlobKeys(ctx, ws.ID)
	if err != nil {
		return err
	}
	keys = append(keys, diffBlobKey(ws.ID))
	for _, k := range keys {
		if err := s.blobs.Delete(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// RuntimeSweepConfig says when a started remote runtime counts as gone.
type RuntimeSweepConfig struct {
	// OfflineAfter: a runtime not heard from for this long (it calls at least every
	// RuntimeHeartbeat) is offline, and its machine is started again.
	OfflineAfter time.Duration
	// StartTimeout: a machine whose runtime has not said hello this long after its
	// start is started again (image pulls and scheduling take their time).
	StartTimeout time.Duration
}

// RuntimeHeartbeat is how often a remote runtime calls the hub at least.
const RuntimeHeartbeat = 15 * time.Second

// SweepRuntimes revokes the runtimes not heard from in time and wakes the worker,
// which starts their machines again (the workspace's state is kept: a ready workspace
// is restarted when it has messages). It runs once per tick across replicas.
func (sw *Sweeps) SweepRuntimes(ctx context.Context, cfg RuntimeSweepConfig, tick time.Time) (n int, err error) {
	s := sw.w
	if cfg.OfflineAfter <= 0 || cfg.StartTimeout <= 0 {
		return 0, nil
	}
	err = sw.runTick(ctx, "runtimes", tick, func(q Queries) error {
		now := s.clock.Now()
		ids, err := q.RevokeSilentRuntimes(ctx, now.Add(-cfg.OfflineAfter), now.Add(-cfg.StartTimeout), sweepBatch)
		if err != nil {
			return err
		}
		n = len(ids)
		for _, id := range ids {
			if err := wake(ctx, q, WorkChannel, id); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// MachineFailed fails a workspace whose provider reports that its machine cannot run
// (a Pod no node can take, an image that cannot be pulled, a machine killed for
// memory). A workspace no longer starting or running is left as it is, so every
// replica's watcher may report the same Pod. Failed is final: the provider stops the
// machine itself once told.
func (sw *Sweeps) MachineFailed(ctx context.Context, workspaceID, statusCode, detail string) (bool, error) {
	s := sw.w
	failed := false
	err := s.store.InTx(ctx, func(q Queries) error {
		ws, err := q.GetWorkspaceByID(ctx, workspaceID)
		if err != nil {
			return err
		}
		cur, err := q.LockWorkspace(ctx, ws.AccountID, ws.ID)
		if err != nil {
			return err
		}
		switch cur.State {
		case StateQueued, StateProvisioning, StateSetup, StateResuming, StateReady:
		default:
			return nil
		}
		failed, err = s.failMachine(ctx, q, cur, statusCode, detail)
		return err
	})
	if failed {
		s.log().Warn("workspace machine failed", "workspace", workspaceID, "status", statusCode, "detail", detail)
	}
	return failed, err
}

// failMachine fails a workspace locked by the caller whose machine cannot go on: no
// turn will take its messages (failed now, not by expiry), its runtime's token is
// revoked, and its chat threads are told.
func (s *Worker) failMachine(ctx context.Context, q Queries, cur *Workspace, statusCode, detail string) (bool, error) {
	now := s.clock.Now()
	change := changeTo(StateFailed, statusCode, now)
	change.StatusDetail = detail
	if ok, err := setState(ctx, q, cur.ID, cur.State, change); err != nil || !ok {
		return false, err
	}
	if err := q.RevokeRuntime(ctx, cur.ID); err != nil {
		return false, err
	}
	if _, err := q.FailOpenMessages(ctx, cur.ID); err != nil {
		return false, err
	}
	fx := s.in(ctx, q)
	if err := fx.failureNotices(cur, statusCode); err != nil {
		return false, err
	}
	return true, fx.wake(WorkChannel, cur.ID)
}
