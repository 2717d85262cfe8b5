package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A local workspace runs inside a hub, its checkout in that hub's data directory: on
// one host. Replicas share the database but not their disks, so a local workspace is
// stepped only by the hubs of the host that holds it (Workspace.Host). The host is
// recorded when the workspace is created on a hub that steps workspaces itself, else
// by the first claim that takes it, in the claim's statement. That first claim also
// takes on a local workspace from before hosts were recorded: which host holds such a
// checkout is known to no one, but on a one-host hub it is the one that claims.
// Remote providers' workspaces have no host: any replica reaches their machines.
//
// Every hub records its host alive (Heartbeat). A host not seen for longer than the
// lost-after setting is lost (SweepLostHosts): its local workspaces being set up,
// ready or resuming fail machine_lost, a turn running there ends, and the hub that was
// stepping them, should it still be at work, loses its lease. Those still queued (no
// checkout yet) and those it was pausing, archiving or deleting are let go to any
// host: none of those steps needs the checkout, which is gone with its host. A host
// that comes back finds its failed workspaces failed (a failed workspace only moves on
// to deleting), while its paused and archived ones are still its own.

// HostConfig says which host this hub is on, and what it does with local workspaces.
type HostConfig struct {
	// ID names this hub's host (WSHUB_HOST_ID): the hubs that share a data directory
	// share it.
	ID string
	// Local: this hub runs local workspaces (local is among its providers). Its worker
	// claims those of its host, and takes on a local workspace no host holds yet;
	// without it, it claims none.
	Local bool
	// Pin records ID on each local workspace created here, when this hub also steps
	// workspaces (the worker role). A hub that only serves requests leaves the host to
	// the first claim, or its workspaces would wait for a worker that never comes.
	Pin bool
}

// claimHost is the host the worker's claims serve ("": no local workspace).
func (h HostConfig) claimHost() string {
	if !h.Local {
		return ""
	}
	return h.ID
}

// pinHost is the host a workspace created here is recorded on at once ("": none yet).
func (h HostConfig) pinHost(providerID string) string {
	if !h.Pin || !h.Local || providerID != LocalProviderID {
		return ""
	}
	return h.ID
}

// LostHost is a host that has not been seen for the lost-after setting.
type LostHost struct {
	ID     string
	SeenAt time.Time // its last heartbeat, by the database's clock
}

// HostQueries are the statements of the hosts' heartbeats and the lost-host sweep.
// Whether a host is lost is judged by the database's clock alone, like leases: hubs'
// clocks may disagree.
type HostQueries interface {
	// HostSeen records host alive now; started marks its hub's start as well.
	HostSeen(ctx context.Context, host string, started bool) error
	// LostHosts are the hosts not seen for lostAfter.
	LostHosts(ctx context.Context, lostAfter time.Duration) ([]LostHost, error)
	// LockLostHostWorkspace locks (FOR UPDATE SKIP LOCKED) one workspace of host that
	// is being set up (provisioning, setup), ready or resuming, while host is not seen
	// for lostAfter, and returns it with host as read then; ErrNoRows when there is none. The host's row is read
	// under a share lock: a heartbeat that commits first is seen, and one that comes
	// after waits for this transaction.
	LockLostHostWorkspace(ctx context.Context, host string, lostAfter time.Duration) (*Workspace, LostHost, error)
	// ReleaseLostHostWorkspaces lets go of up to limit workspaces of host, while it is
	// not seen for lostAfter, that are queued, pausing, archiving or deleting: no host,
	// no lease (the next claim takes them on). It returns their ids.
	ReleaseLostHostWorkspaces(ctx context.Context, host string, lostAfter time.Duration, limit int) ([]string, error)
	// RevokeLease ends whatever lease the workspace has: its holder is fenced out of
	// every statement it would still make under it.
	RevokeLease(ctx context.Context, id string) error
}

// Heartbeat records this hub's host alive now; first marks this hub's start.
func (sw *Sweeps) Heartbeat(ctx context.Context, first bool) error {
	return sw.w.store.HostSeen(ctx, sw.w.host.ID, first)
}

// SweepLostHosts fails the local workspaces of the hosts not seen for lostAfter (each
// in a transaction of its own, with what it causes) and lets go of those still queued
// or being paused, archived or deleted. Every replica may run it at once: the row locks make
// each workspace fail once. With no host lost, as is usual, it is one read of the
// hosts. At most sweepBatch workspaces of each kind per call; the next takes the rest.
func (sw *Sweeps) SweepLostHosts(ctx context.Context, lostAfter time.Duration) (failed, released int, err error) {
	s := sw.w
	if lostAfter <= 0 {
		return 0, 0, nil
	}
	hosts, err := s.store.LostHosts(ctx, lostAfter)
	if err != nil {
		return 0, 0, err
	}
	for _, h := range hosts {
		for failed < sweepBatch {
			ok, err := s.failLostHostWorkspace(ctx, h.ID, lostAfter)
			if err != nil {
				return failed, released, err
			}
			if !ok {
				break
			}
			failed++
		}
		err = s.store.InTx(ctx, func(q Queries) error {
			ids, err := q.ReleaseLostHostWorkspaces(ctx, h.ID, lostAfter, sweepBatch-released)
			if err != nil || len(ids) == 0 {
				return err
			}
			released += len(ids)
			return wake(ctx, q, WorkChannel, "")
		})
		if err != nil || failed >= sweepBatch || released >= sweepBatch {
			return failed, released, err
		}
	}
	return failed, released, nil
}

// failLostHostWorkspace fails one workspace of the lost host; false when none is left.
func (s *Worker) failLostHostWorkspace(ctx context.Context, hostID string, lostAfter time.Duration) (bool, error) {
	var failed *Workspace
	var host LostHost
	err := s.store.InTx(ctx, func(q Queries) error {
		failed = nil
		cur, lost, err := q.LockLostHostWorkspace(ctx, hostID, lostAfter)
		if errors.Is(err, ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		// A hub of that host still at work on it (it lost the database, not its life)
		// writes nothing more: its renewal finds the lease gone and stops the step.
		if err := q.RevokeLease(ctx, cur.ID); err != nil {
			return err
		}
		if err := s.endLostTurn(ctx, q, cur); err != nil {
			return err
		}
		detail := fmt.Sprintf("host %s has not been seen since %s", lost.ID, lost.SeenAt.UTC().Format(time.RFC3339))
		ok, err := s.failMachine(ctx, q, cur, FailureStatus(FailureMachineLost, ""), detail)
		if err != nil {
			return err
		}
		if !ok { // locked above in a failable state: a bug, not a race
			return fmt.Errorf("fail workspace %s of lost host %s: %w", cur.ID, lost.ID, errStateMoved)
		}
		failed, host = cur, lost
		return nil
	})
	if failed != nil {
		s.log().Warn("workspace failed: its host is lost", "workspace", failed.ID, "host", host.ID, "seenAt", host.SeenAt)
	}
	return failed != nil, err
}

// endLostTurn ends the turn a lost host was running in ws, if any: no one will record
// its reply. Its message fails with the workspace's other open ones (failMachine);
// here its open approvals are closed and its end is written for the event streams and
// the chat statuses, as interrupted (the hub running it stopped, if not by choice).
func (s *Worker) endLostTurn(ctx context.Context, q Queries, ws *Workspace) error {
	m, err := q.OldestOpenMessage(ctx, ws.ID)
	if errors.Is(err, ErrNoRows) || err == nil && m.Status != MessageDelivered {
		return nil
	}
	if err != nil {
		return err
	}
	fx := s.in(ctx, q)
	if err := fx.approvalsClosed(ws.ID, m.TurnID); err != nil {
		return err
	}
	return fx.turnFinished(ws.ID, m.TurnID, OutcomeInterrupted)
}
