package core

import (
	"context"
	"errors"
	"strings"
	"time"
)

// RemovedProject is what RemoveProject did.
type RemovedProject struct {
	Project *Project
	// Archived lists the live workspaces archived to make way (with force).
	Archived []string
	// MirrorError says why the mirror could not be deleted from disk ("" when it was):
	// the project is removed all the same; the operator deletes the directory by hand.
	MirrorError string
}

// A forced removal archives the live workspaces it finds; one still starting,
// pausing or resuming cannot be archived yet (behaviour.md), so it waits for it,
// polling, at most removeWait.
const (
	removeWait = 2 * time.Minute
	removePoll = 250 * time.Millisecond
)

// RemoveProject removes a project: it leaves listings, takes no new workspace,
// stops being a chat default, and its mirror is deleted from disk. Workspaces that
// had it keep their history. It is refused while live workspaces use the project,
// unless force, which archives them first. Removing a removed project changes nothing.
func (s *Admin) RemoveProject(ctx context.Context, projectID string, force bool) (*RemovedProject, error) {
	out := &RemovedProject{}
	archived := map[string]bool{}
	deadline := time.Now().Add(removeWait)
	for {
		var live []string
		err := s.store.InTx(ctx, func(q Queries) error {
			p, err := q.LockProject(ctx, projectID)
			if err != nil {
				return notFound(err, CodeNotFound, "no such project")
			}
			out.Project = p
			if p.RemovedAt != nil {
				return nil
			}
			// Creates hold the project (ShareProject) until they commit, so with it locked
			// here no workspace appears between this count and the removal.
			if live, err = q.LiveWorkspacesOfProject(ctx, p.ID, ClosedStates); err != nil || len(live) > 0 {
				return err
			}
			now := s.clock.Now()
			p.RemovedAt, p.UpdatedAt = &now, now
			return q.RemoveProject(ctx, p.ID, now)
		})
		if err != nil {
			return nil, err
		}
		if len(live) == 0 {
			break
		}
		if !force {
			return nil, Errorf(CodeProjectInUse, "%d live workspace(s) use the project (%s); archive them or remove with --force",
				len(live), strings.Join(live, ", "))
		}
		var waiting []string
		for _, id := range live {
			if _, err := archiveWorkspace(ctx, s.store, s.clock, id); err != nil {
				if !notArchivableYet(err) {
					return nil, err
				}
				waiting = append(waiting, id)
				continue
			}
			if !archived[id] {
				archived[id] = true
				out.Archived = append(out.Archived, id)
			}
		}
		if len(waiting) == 0 {
			continue // archiving now: the next count no longer sees them
		}
		if time.Now().After(deadline) {
			return nil, Errorf(CodeProjectInUse, "workspaces still starting, pausing or resuming after %s (%s); retry", removeWait, strings.Join(waiting, ", "))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(removePoll):
		}
	}
	if err := s.mirror.Remove(ctx, projectID); err != nil {
		out.MirrorError = err.Error()
	}
	s.caches.forget(ctx, projectID)
	return out, nil
}

// notArchivableYet: the workspace is in a state archive refuses (starting, pausing,
// resuming; or it moved to failed or deleting, which the next count drops).
func notArchivableYet(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeWorkspaceNotAcceptingMessages
}
