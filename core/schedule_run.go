package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
)

// ScheduleRuns are the schedule runner's use cases (jobs/), unscoped: every account's
// schedules.
type ScheduleRuns struct{ s *Schedules }

// scheduleBatch bounds the schedules one pass runs; the next pass takes the rest.
const scheduleBatch = 100

// RunDueSchedules runs every due tick of the schedules not paused. Every replica
// calls it; each tick runs once across them. One schedule's failure does not hold
// back the others: its tick stays due and the next pass tries it again.
func (r *ScheduleRuns) RunDueSchedules(ctx context.Context) (recorded int, err error) {
	s := r.s
	ids, err := s.store.DueSchedules(ctx, s.clock.Now(), scheduleBatch)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, id := range ids {
		lock := func(q Queries) (*StoredSchedule, error) { return q.LockDueSchedule(ctx, id) }
		runs, err := s.runTicks(ctx, lock, s.duePlan)
		if err != nil {
			errs = append(errs, fmt.Errorf("schedule %s: %w", id, err))
		}
		recorded += len(runs)
	}
	return recorded, errors.Join(errs...)
}

// NextScheduleTick is the earliest tick any schedule waits for (zero: none).
func (r *ScheduleRuns) NextScheduleTick(ctx context.Context) (time.Time, error) {
	t, err := r.s.store.NextScheduleTick(ctx)
	if errors.Is(err, ErrNoRows) {
		return time.Time{}, nil
	}
	return t, err
}

// tickPlan is what one pass does with a schedule: the missed ticks it records as
// skipped, the tick it runs, and the next tick it waits for.
type tickPlan struct {
	skipped []*ScheduleRun
	run     time.Time
	// next is the schedule's next tick once this one ran (zero: unchanged, a run now).
	next time.Time
	// claim: the run is a cron tick, claimed as (schedule:<id>, tick) with the job-run
	// mechanism of the hub's sweeps, so no replica runs it twice.
	claim bool
	// last: the expression never comes round again; the schedule is paused.
	last bool
}

// duePlan plans the schedule's due ticks at now. A tick is run when it is less than
// its period late (the gap to the tick after it); otherwise it was missed while no
// hub ran, and is recorded as skipped_late. So of ticks missed together only the
// newest runs: the others are each at least a period behind.
func (s *Schedules) duePlan(sc *StoredSchedule, now time.Time) (tickPlan, error) {
	var p tickPlan
	if sc.Paused || sc.NextTickAt.After(now) {
		return p, errTickTaken // another replica ran it since the list was read
	}
	spec, err := scheduleTimes(s.cron, sc.Cron, sc.TimeZone, now)
	if err != nil {
		return p, err
	}
	for t := sc.NextTickAt; ; {
		next := spec.Next(t)
		late, period := now.Sub(t), next.Sub(t)
		if next.IsZero() || late < period {
			p.run, p.next, p.claim, p.last = t, next, true, next.IsZero()
			return p, nil
		}
		p.skipped = append(p.skipped, &ScheduleRun{ScheduleID: sc.ID, Tick: t, Outcome: RunSkippedLate, RecordedAt: now,
			Reason: fmt.Sprintf("missed while no hub ran: %s late, more than the schedule's period of %s", late.Round(time.Second), period)})
		if len(p.skipped) > MaxScheduleRuns { // the log keeps no more
			p.skipped = p.skipped[1:]
		}
		t = next
	}
}

// errRunRefused carries a run the use case refused out of the transaction that tried
// it, so that the refusal is recorded in a clean one.
type errRunRefused struct{ err error }

func (e *errRunRefused) Error() string { return e.err.Error() }

// runTicks runs the schedule lock returns (ErrNoRows: none) as plan says, in one
// transaction that claims the tick, runs it through the workspaces' own use cases
// (quotas and billing apply), records the run and moves the schedule on. A run the
// use case refuses rolls that back; a second transaction records the refusal in its
// place, so the tick is used either way, once.
func (s *Schedules) runTicks(ctx context.Context, lock func(Queries) (*StoredSchedule, error),
	plan func(*StoredSchedule, time.Time) (tickPlan, error)) ([]*ScheduleRun, error) {
	var refusal error
	for {
		var runs []*ScheduleRun
		err := s.store.InTx(ctx, func(q Queries) error {
			sc, err := lock(q)
			if errors.Is(err, ErrNoRows) {
				return errTickTaken
			}
			if err != nil {
				return err
			}
			now := s.clock.Now()
			p, err := plan(sc, now)
			if err != nil {
				return err
			}
			if p.claim {
				if ok, err := q.ClaimCronTick(ctx, "schedule:"+sc.ID, p.run, now); err != nil || !ok {
					return cmp.Or(err, errTickTaken)
				}
			}
			run := &ScheduleRun{ScheduleID: sc.ID, Tick: p.run, RecordedAt: now}
			if refusal == nil {
				if err := s.runOnce(ctx, q, sc, run); err != nil {
					return &errRunRefused{err}
				}
			} else {
				s.refused(run, refusal)
			}
			runs = append(p.skipped, run)
			for _, r := range runs {
				if err := q.InsertScheduleRun(ctx, r, MaxScheduleRuns); err != nil {
					return err
				}
			}
			if !p.next.IsZero() {
				sc.NextTickAt = p.next
			}
			sc.Paused = sc.Paused || p.last
			return q.UpdateSchedule(ctx, sc)
		})
		var rr *errRunRefused
		switch {
		case errors.As(err, &rr) && refusal == nil && !transient(rr.err):
			refusal = rr.err
		case errors.As(err, &rr):
			return nil, rr.err
		case errors.Is(err, errTickTaken):
			return nil, nil
		default:
			return runs, err
		}
	}
}

// transient errors are the store's: the tick stays due and the next pass runs it.
func transient(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrContended) || errors.Is(err, ErrConflict)
}

// refused fills run with why it could not start: the use case's code and words, or,
// for anything else, failed (logged, never shown).
func (s *Schedules) refused(run *ScheduleRun, err error) {
	var e *Error
	if errors.As(err, &e) {
		run.Outcome, run.Code, run.Reason = RunRefused, e.Code, e.Detail
		return
	}
	s.log().Warn("schedule run failed", "schedule", run.ScheduleID, "err", err)
	run.Outcome, run.Code, run.Reason = RunFailed, CodeInternal, "the hub could not run it; its log says why"
}

// runOnce runs the schedule's prompt as its account: a new workspace, or a message
// to its standing workspace (started on the first run, and again when it is gone).
// The schedule is the workspace's origin and the author of the workspace and prompt.
func (s *Schedules) runOnce(ctx context.Context, q Queries, sc *StoredSchedule, run *ScheduleRun) error {
	acct, err := q.GetAccount(ctx, sc.AccountID)
	if err != nil {
		return err
	}
	if err := acct.checkEntitled(); err != nil {
		return err
	}
	open, err := s.opened(sc)
	if err != nil {
		return err
	}
	author := scheduleAuthor(&sc.Schedule)
	if sc.Mode == ScheduleModeStanding && sc.StandingWorkspaceID != "" {
		_, err := s.workspaces.sendIn(ctx, q, acct, sc.StandingWorkspaceID, sendRequest{Text: open.Prompt}, "", author)
		if err == nil {
			run.Outcome, run.WorkspaceID = RunSent, sc.StandingWorkspaceID
			return nil
		}
		if c := ErrorCode(err); c != CodeWorkspaceNotFound && c != CodeWorkspaceNotAcceptingMessages {
			return err
		}
	}
	req := createRequest{Prompt: &open.Prompt, ProjectID: &sc.ProjectID, Agent: &sc.Agent, Model: &sc.Model}
	ws, _, err := s.workspaces.createIn(ctx, q, acct, req, "", OriginSchedule, author, nil)
	if err != nil {
		return err
	}
	run.Outcome, run.WorkspaceID = RunStarted, ws.ID
	if sc.Mode == ScheduleModeStanding {
		sc.StandingWorkspaceID = ws.ID
	}
	return nil
}
