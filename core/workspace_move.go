package core

import (
	"context"
	"slices"
)

// Operator lifecycle commands: each is a compare-and-set from an allowed state to the
// transitional state, then the worker (woken by NOTIFY) does the machine work. A turn
// that is running sees the change on its next lease renewal and is interrupted.
var (
	archivableFrom   = []WorkspaceState{StateReady, StatePaused}
	unarchivableFrom = []WorkspaceState{StateArchived}
)

// Archivable reports whether the workspace can be archived now.
func (w *Workspace) Archivable() bool { return slices.Contains(archivableFrom, w.State) }

// ArchiveWorkspace moves a ready or paused workspace to archiving.
func (s *Admin) ArchiveWorkspace(ctx context.Context, id string) (*Workspace, error) {
	return archiveWorkspace(ctx, s.store, s.clock, id)
}

// UnarchiveWorkspace moves an archived workspace to resuming.
func (s *Admin) UnarchiveWorkspace(ctx context.Context, id string) (*Workspace, error) {
	return moveWorkspace(ctx, s.store, s.clock, id, unarchivableFrom, StateResuming)
}

// DeleteWorkspace moves any workspace that is not deleted to deleting.
func (s *Admin) DeleteWorkspace(ctx context.Context, id string) (*Workspace, error) {
	return moveWorkspace(ctx, s.store, s.clock, id, nil, StateDeleting)
}

// archiveWorkspace is the archive the operator, a chat thread's owner and project
// removal share; the caller has checked who may ask.
func archiveWorkspace(ctx context.Context, store TxStore, clock Clock, id string) (*Workspace, error) {
	return moveWorkspace(ctx, store, clock, id, archivableFrom, StateArchiving)
}

// moveAttempts bounds how often a move decides again because a worker moved the
// workspace between the read and the compare-and-set (archiving to archived, say, as
// the owner deletes it): each such move is a step of the worker's, so a few suffice.
const moveAttempts = 3

func moveWorkspace(ctx context.Context, store TxStore, clock Clock, id string, from []WorkspaceState, to WorkspaceState) (*Workspace, error) {
	var ws *Workspace
	err := store.InTx(ctx, func(q Queries) error {
		for attempt := 1; ; attempt++ {
			// Each statement of the transaction reads what is committed when it starts
			// (READ COMMITTED): after a missed compare-and-set, the state the other
			// change left.
			w, err := q.GetWorkspaceByID(ctx, id)
			if err != nil {
				return notFound(err, CodeWorkspaceNotFound, "no such workspace")
			}
			if w.State == to {
				ws = w // already on its way: nothing to do
				return nil
			}
			allowed := from == nil && w.State != StateDeleted && w.State != StateDeleting || slices.Contains(from, w.State)
			if !allowed {
				return Errorf(CodeWorkspaceNotAcceptingMessages, "the workspace is %s and cannot move to %s", w.State, to)
			}
			if to == StateResuming {
				// Back to live only while its project is (held against removal until commit).
				if _, err := q.ShareProject(ctx, w.AccountID, w.ProjectID); err != nil {
					return notFound(err, CodeProjectNotFound, "the workspace's project was removed")
				}
			}
			ok, err := setState(ctx, q, w.ID, w.State, changeTo(to, "", clock.Now()))
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if attempt == moveAttempts {
				return Errorf(CodeWorkspaceStateContended, "the workspace changed state meanwhile; retry")
			}
		}
		var err error
		if ws, err = q.GetWorkspaceByID(ctx, id); err != nil {
			return err
		}
		return wake(ctx, q, WorkChannel, id)
	})
	return ws, err
}
