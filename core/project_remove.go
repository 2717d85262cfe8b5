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
	return removeProject(ctx, s, projectID, force, nil)
}

// removeProject is RemoveProject by the operator (by nil), or by an owner in the app:
// then the project must be of their account, and the removal is audited as theirs in
// its transaction.
func removeProject(ctx context.Context, s *Admin, projectID string, force bool, by *AppSession) (*RemovedProject, error) {
	out := &RemovedProject{}
	archived := map[string]bool{}
	var waiting []string
	// Workspaces leave a starting, pausing or resuming state on their own: the wait
	// polls for that (no wake-up announces it).
	wt := watchKey(nil, "", "", removePoll)
	defer wt.Close()
	removed, err := wt.until(ctx, deadlineIn(removeWait), func() (bool, time.Duration, error) {
		live, err := removeUnused(ctx, s.store, s.clock, projectID, out, by)
		if err != nil || len(live) == 0 {
			return err == nil, 0, err
		}
		if !force {
			how := "archive them or remove with --force"
			if by != nil {
				how = "archive them first"
			}
			return false, 0, Errorf(CodeProjectInUse, "%d live workspace(s) use the project (%s); %s",
				len(live), strings.Join(live, ", "), how)
		}
		waiting = waiting[:0]
		for _, id := range live {
			if _, err := archiveWorkspace(ctx, s.store, s.clock, id); err != nil {
				if !notArchivableYet(err) {
					return false, 0, err
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
			return false, time.Nanosecond, nil // archived now: the next count, at once, no longer sees them
		}
		return false, 0, nil
	})
	if err != nil {
		return nil, err
	}
	if !removed {
		return nil, Errorf(CodeProjectInUse, "workspaces still starting, pausing or resuming after %s (%s); retry", removeWait, strings.Join(waiting, ", "))
	}
	if err := s.mirror.Remove(ctx, projectID); err != nil {
		out.MirrorError = err.Error()
	}
	s.caches.forget(ctx, projectID)
	return out, nil
}

// removeUnused removes the project, with it locked, when no live workspace uses it,
// and lists the live ones otherwise. A removed project is left as it is.
func removeUnused(ctx context.Context, store TxStore, clock Clock, projectID string, out *RemovedProject, by *AppSession) (live []string, err error) {
	err = store.InTx(ctx, func(q Queries) error {
		p, err := q.LockProject(ctx, projectID)
		if err == nil && by != nil && (p.AccountID != by.AccountID || p.RemovedAt != nil) {
			err = ErrNoRows // another account's project does not exist for this one
		}
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
		now := clock.Now()
		p.RemovedAt, p.UpdatedAt = &now, now
		if err := q.RemoveProject(ctx, p.ID, now); err != nil || by == nil {
			return err
		}
		return by.audit(ctx, q, now, AuditProjectRemoved, p.ID, DisplayRepository(p.Repository))
	})
	return live, err
}

// notArchivableYet: the workspace is in a state archive refuses (starting, pausing,
// resuming; or it moved to failed or deleting, which the next count drops).
func notArchivableYet(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeWorkspaceNotAcceptingMessages
}
