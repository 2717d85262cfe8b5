package core

import (
	"context"
	"errors"
	"time"
)

// Schedules are the REST API's schedules, on the caller's account. A key limited to
// projects sees the schedules of those projects only, as it sees their workspaces.
type Schedules struct {
	kernel
	logger
	store      schedulesStore
	workspaces *Workspaces
	cron       CronParser
	quotas     Quotas
}

// ScheduleChannel is the NOTIFY channel that tells every replica's runner a schedule
// was made or changed, so a tick nearer than its next pass is not late.
const ScheduleChannel = "wshub_schedules"

// schedulesStore is what Schedules and ScheduleRuns read and write.
type schedulesStore interface {
	TxStore
	AccountQueries
	ProjectQueries
	ScheduleQueries
}

// CreateSchedule adds a schedule to the account; its first tick is the expression's
// next after now. An account at its schedule quota is refused (quota_exceeded).
func (s *Schedules) CreateSchedule(ctx context.Context, acct *Account, in ScheduleInput) (*Schedule, error) {
	who := keyActor(acct)
	return s.create(ctx, acct, in, &who)
}

// create is CreateSchedule, audited as who made it.
func (s *Schedules) create(ctx context.Context, acct *Account, in ScheduleInput, who *actor) (*Schedule, error) {
	now := s.clock.Now()
	sc := &Schedule{ID: NewID(s.rand, PrefixSchedule), AccountID: acct.ID, Mode: ScheduleModeNew, TimeZone: "UTC",
		CreatedAt: now, UpdatedAt: now}
	spec, err := applyScheduleInput(s.cron, sc, in, true, now)
	if err != nil {
		return nil, err
	}
	sc.NextTickAt = spec.Next(now)
	sealed, err := s.seal([]byte(sc.Prompt), SealedSchedulePrompt.binding(acct.ID, sc.ID))
	if err != nil {
		return nil, err
	}
	err = s.store.InTx(ctx, func(q Queries) error {
		if err := s.requireProject(ctx, q, acct, sc.ProjectID); err != nil {
			return err
		}
		if err := s.quotas.checkScheduleQuota(ctx, q, acct); err != nil {
			return err
		}
		if err := q.InsertSchedule(ctx, &StoredSchedule{Schedule: *sc, SealedPrompt: sealed}); err != nil {
			return err
		}
		if err := who.audit(ctx, q, acct.ID, now, AuditScheduleCreated, sc.ID, sc.Name); err != nil {
			return err
		}
		return wake(ctx, q, ScheduleChannel, "")
	})
	if err != nil {
		return nil, err
	}
	return sc, nil
}

// requireProject answers 404 for a project the account (or its key) does not reach.
func (s *Schedules) requireProject(ctx context.Context, q ProjectQueries, acct *Account, projectID string) error {
	if !acct.KeyLimits.reaches(projectID) {
		return Errorf(CodeProjectNotFound, "no project with this id on this account")
	}
	_, err := q.ShareProject(ctx, acct.ID, projectID)
	return notFound(err, CodeProjectNotFound, "no project with this id on this account")
}

// ListSchedules lists the account's schedules, oldest first.
func (s *Schedules) ListSchedules(ctx context.Context, acct *Account) ([]*Schedule, error) {
	stored, err := s.store.ListSchedules(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	out := make([]*Schedule, 0, len(stored))
	for _, st := range stored {
		if !acct.KeyLimits.reaches(st.ProjectID) {
			continue
		}
		sc, err := s.opened(st)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// GetSchedule reads one of the account's schedules.
func (s *Schedules) GetSchedule(ctx context.Context, acct *Account, id string) (*Schedule, error) {
	st, err := accountSchedule(ctx, s.store.GetSchedule, acct, id)
	if err != nil {
		return nil, err
	}
	return s.opened(st)
}

// accountSchedule reads a schedule through get, 404 when the account or its key does
// not reach it.
func accountSchedule(ctx context.Context, get func(context.Context, string, string) (*StoredSchedule, error), acct *Account,
	id string) (*StoredSchedule, error) {
	if !ValidID(id, PrefixSchedule) {
		return nil, errNoSchedule
	}
	st, err := get(ctx, acct.ID, id)
	if errors.Is(err, ErrNoRows) || err == nil && !acct.KeyLimits.reaches(st.ProjectID) {
		return nil, errNoSchedule
	}
	return st, err
}

var errNoSchedule = Errorf(CodeScheduleNotFound, "no schedule with this id on this account")

// opened is the stored schedule with its prompt opened.
func (s *Schedules) opened(st *StoredSchedule) (*Schedule, error) {
	sc := st.Schedule
	var err error
	sc.Prompt, err = s.open(st.SealedPrompt, SealedSchedulePrompt.binding(sc.AccountID, sc.ID))
	return &sc, err
}

// UpdateSchedule changes what in names. A changed expression or zone counts its next
// tick afresh from now.
func (s *Schedules) UpdateSchedule(ctx context.Context, acct *Account, id string, in ScheduleInput) (*Schedule, error) {
	who := keyActor(acct)
	return s.update(ctx, acct, id, in, &who)
}

// update is UpdateSchedule, audited as who changed it.
func (s *Schedules) update(ctx context.Context, acct *Account, id string, in ScheduleInput, who *actor) (*Schedule, error) {
	return s.change(ctx, acct, id, who, AuditScheduleUpdated, func(q Queries, sc *StoredSchedule, now time.Time) error {
		before := sc.Schedule
		open, err := s.opened(sc)
		if err != nil {
			return err
		}
		sc.Prompt = open.Prompt
		spec, err := applyScheduleInput(s.cron, &sc.Schedule, in, false, now)
		if err != nil {
			return err
		}
		if sc.ProjectID != before.ProjectID {
			if err := s.requireProject(ctx, q, acct, sc.ProjectID); err != nil {
				return err
			}
			sc.StandingWorkspaceID = "" // a workspace is of one project
		}
		if sc.Cron != before.Cron || sc.TimeZone != before.TimeZone {
			sc.NextTickAt = spec.Next(now)
		}
		if in.Prompt != nil {
			if sc.SealedPrompt, err = s.seal([]byte(sc.Prompt), SealedSchedulePrompt.binding(sc.AccountID, sc.ID)); err != nil {
				return err
			}
		}
		return nil
	})
}

// PauseSchedule stops its ticks until resumed; a paused schedule can still be run now.
func (s *Schedules) PauseSchedule(ctx context.Context, acct *Account, id string) (*Schedule, error) {
	who := keyActor(acct)
	return s.pause(ctx, acct, id, &who)
}

// pause is PauseSchedule, audited as who did it (an API key, or the app's person).
func (s *Schedules) pause(ctx context.Context, acct *Account, id string, who *actor) (*Schedule, error) {
	return s.change(ctx, acct, id, who, AuditSchedulePaused, func(_ Queries, sc *StoredSchedule, _ time.Time) error {
		sc.Paused = true
		return nil
	})
}

// ResumeSchedule runs its ticks again from the next one after now: the ticks that
// came while it was paused are not run.
func (s *Schedules) ResumeSchedule(ctx context.Context, acct *Account, id string) (*Schedule, error) {
	who := keyActor(acct)
	return s.resume(ctx, acct, id, &who)
}

// resume is ResumeSchedule, audited as who did it.
func (s *Schedules) resume(ctx context.Context, acct *Account, id string, who *actor) (*Schedule, error) {
	return s.change(ctx, acct, id, who, AuditScheduleResumed, func(_ Queries, sc *StoredSchedule, now time.Time) error {
		if !sc.Paused {
			return nil
		}
		spec, err := scheduleTimes(s.cron, sc.Cron, sc.TimeZone, now)
		if err != nil {
			return err
		}
		sc.Paused, sc.NextTickAt = false, spec.Next(now)
		return nil
	})
}

// change applies edit to the locked schedule and stores it, in one transaction; who
// is recorded in the audit log as doing action.
func (s *Schedules) change(ctx context.Context, acct *Account, id string, who *actor, action string,
	edit func(Queries, *StoredSchedule, time.Time) error) (*Schedule, error) {
	var out *StoredSchedule
	err := s.store.InTx(ctx, func(q Queries) error {
		sc, err := accountSchedule(ctx, q.LockSchedule, acct, id)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if err := edit(q, sc, now); err != nil {
			return err
		}
		sc.UpdatedAt, out = now, sc
		if err := q.UpdateSchedule(ctx, sc); err != nil {
			return err
		}
		if err := who.audit(ctx, q, acct.ID, now, action, sc.ID, sc.Name); err != nil {
			return err
		}
		return wake(ctx, q, ScheduleChannel, "")
	})
	if err != nil {
		return nil, err
	}
	return s.opened(out)
}

// DeleteSchedule removes the schedule and its run log; its workspaces stay.
func (s *Schedules) DeleteSchedule(ctx context.Context, acct *Account, id string) error {
	who := keyActor(acct)
	_, err := s.remove(ctx, acct, id, &who, "")
	return err
}

// remove is DeleteSchedule, audited as who, answering the schedule as it was. When
// project is not "", a schedule of another project is answered as not found, as a
// chat channel with a project neither lists nor deletes the others.
func (s *Schedules) remove(ctx context.Context, acct *Account, id string, who *actor, project string) (*Schedule, error) {
	var gone *Schedule
	err := s.store.InTx(ctx, func(q Queries) error {
		sc, err := accountSchedule(ctx, q.LockSchedule, acct, id)
		if err != nil {
			return err
		}
		if project != "" && sc.ProjectID != project {
			return errNoSchedule
		}
		if _, err := q.DeleteSchedule(ctx, acct.ID, id); err != nil {
			return err
		}
		gone = &sc.Schedule
		return who.audit(ctx, q, acct.ID, s.clock.Now(), AuditScheduleDeleted, sc.ID, sc.Name)
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}

// ListScheduleRuns lists the schedule's last runs, newest first.
func (s *Schedules) ListScheduleRuns(ctx context.Context, acct *Account, id string) ([]*ScheduleRun, error) {
	if _, err := accountSchedule(ctx, s.store.GetSchedule, acct, id); err != nil {
		return nil, err
	}
	return s.store.ListScheduleRuns(ctx, id, MaxScheduleRuns)
}

// RunScheduleNow runs the schedule once at once, paused or not, through the same use
// case as its ticks (quotas apply); the run is recorded in its log and returned. Its
// next tick is unchanged.
func (s *Schedules) RunScheduleNow(ctx context.Context, acct *Account, id string) (*ScheduleRun, error) {
	who := keyActor(acct)
	return s.runNow(ctx, acct, id, &who)
}

// runNow is RunScheduleNow, audited as who asked.
func (s *Schedules) runNow(ctx context.Context, acct *Account, id string, who *actor) (*ScheduleRun, error) {
	if _, err := accountSchedule(ctx, s.store.GetSchedule, acct, id); err != nil {
		return nil, err
	}
	lock := func(q Queries) (*StoredSchedule, error) {
		sc, err := accountSchedule(ctx, q.LockSchedule, acct, id)
		if err == nil { // in the run's transaction (a refused run's is the second)
			err = who.audit(ctx, q, acct.ID, s.clock.Now(), AuditScheduleRun, sc.ID, sc.Name)
		}
		return sc, err
	}
	runs, err := s.runTicks(ctx, lock, func(_ *StoredSchedule, now time.Time) (tickPlan, error) {
		return tickPlan{run: now}, nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 { // deleted meanwhile
		return nil, errNoSchedule
	}
	return runs[len(runs)-1], nil
}
