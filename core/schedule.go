package core

import (
	"context"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // schedules name IANA zones: a hub on a host or image without zoneinfo still knows them
	"unicode"
)

// Schedule modes: what each run does.
const (
	ScheduleModeNew      = "new"      // start a new workspace with the prompt (the default)
	ScheduleModeStanding = "standing" // send the prompt to the schedule's one standing workspace
)

// ScheduleModes lists the modes, the default first.
var ScheduleModes = []string{ScheduleModeNew, ScheduleModeStanding}

// Run outcomes, as the run log records them.
const (
	RunStarted     = "started"      // a workspace was started with the prompt
	RunSent        = "sent"         // the prompt was sent to the standing workspace
	RunSkippedLate = "skipped_late" // missed while no hub ran, a period or more ago
	RunRefused     = "refused"      // the use case refused it (quota, billing, project); Code and Reason say why
	RunFailed      = "failed"       // the hub could not run it; its log says why
)

// Schedule limits.
const (
	// MaxScheduleRuns is how many runs each schedule's log keeps.
	MaxScheduleRuns = 50
	// maxScheduleName bounds a schedule's name, which each run's workspace shows as
	// its author.
	maxScheduleName = 100
	// maxCronChars bounds a cron expression (the longest sensible one is far shorter).
	maxCronChars = 200
)

// Schedule runs a prompt on a cron expression in a time zone.
type Schedule struct {
	ID, AccountID, ProjectID string
	Name                     string
	Agent, Model             string
	Prompt                   string
	// Cron is a standard five-field expression (or a descriptor such as @daily), read
	// in TimeZone, an IANA zone name.
	Cron, TimeZone string
	Mode           string
	Paused         bool
	// StandingWorkspaceID is the standing workspace of a "standing" schedule, once its
	// first run started it ("" before).
	StandingWorkspaceID string
	// NextTickAt is the first tick not yet run (or skipped).
	NextTickAt time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// StoredSchedule is a schedule as the store keeps it: the prompt sealed.
type StoredSchedule struct {
	Schedule
	SealedPrompt []byte
}

// ScheduleRun is one entry of a schedule's run log.
type ScheduleRun struct {
	ScheduleID string
	// Tick is the cron tick the run was for (or when "run now" was asked).
	Tick    time.Time
	Outcome string
	// Code and Reason say why a run was refused or skipped ("" otherwise).
	Code, Reason string
	// WorkspaceID is the workspace started or sent to ("" when none).
	WorkspaceID string
	RecordedAt  time.Time
}

// CronSpec is a parsed cron expression in its zone.
type CronSpec interface {
	// Next is the first tick strictly after t (zero: none, ever).
	Next(t time.Time) time.Time
}

// CronParser parses cron expressions (robfig/cron's standard parser behind this port,
// which core may not import). Errors are the parser's words, shown to the caller.
type CronParser interface {
	ParseCron(expr string, loc *time.Location) (CronSpec, error)
}

// ScheduleQueries are the store statements of schedules and their run logs.
type ScheduleQueries interface {
	InsertSchedule(ctx context.Context, s *StoredSchedule) error
	// GetSchedule reads one of the account's schedules; LockSchedule also locks it
	// until the transaction ends.
	GetSchedule(ctx context.Context, accountID, id string) (*StoredSchedule, error)
	LockSchedule(ctx context.Context, accountID, id string) (*StoredSchedule, error)
	// LockDueSchedule locks a schedule for its due ticks, ErrNoRows when another
	// replica holds it.
	LockDueSchedule(ctx context.Context, id string) (*StoredSchedule, error)
	ListSchedules(ctx context.Context, accountID string) ([]*StoredSchedule, error)
	// CountSchedules counts the account's schedules, paused ones too.
	CountSchedules(ctx context.Context, accountID string) (int, error)
	// UpdateSchedule writes every field a schedule's owner or runner changes.
	UpdateSchedule(ctx context.Context, s *StoredSchedule) error
	DeleteSchedule(ctx context.Context, accountID, id string) (bool, error)
	// DueSchedules lists the ids of schedules not paused whose next tick is at or
	// before now, the most overdue first.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]string, error)
	// NextScheduleTick is the earliest next tick of any schedule not paused
	// (ErrNoRows: none).
	NextScheduleTick(ctx context.Context) (time.Time, error)
	// InsertScheduleRun records a run and drops the schedule's runs beyond the newest
	// keep.
	InsertScheduleRun(ctx context.Context, r *ScheduleRun, keep int) error
	// ListScheduleRuns lists a schedule's runs, newest first.
	ListScheduleRuns(ctx context.Context, scheduleID string, limit int) ([]*ScheduleRun, error)
}

// ScheduleInput is what a caller sent to create or change a schedule. Nil means
// absent: on create, the default (mode "new", zone UTC) or a 400 for what is required.
type ScheduleInput struct {
	Name, ProjectID, Agent, Model, Prompt, Cron, TimeZone, Mode *string
}

// scheduleTimes parses a schedule's expression in its zone, in the wire's words.
func scheduleTimes(p CronParser, expr, zone string, now time.Time) (CronSpec, error) {
	loc, err := time.LoadLocation(zone)
	if zone == "" || zone == "Local" || err != nil { // Local is the hub's, not the caller's
		return nil, Errorf(CodeInvalidRequest, "timeZone %q is not an IANA time zone (such as Europe/Paris or UTC)", truncateRunes(zone, 64))
	}
	switch {
	case expr == "" || chars(expr) > maxCronChars:
		return nil, Errorf(CodeInvalidRequest, "cron must be 1 to %d characters", maxCronChars)
	case strings.Contains(expr, "TZ="):
		return nil, Errorf(CodeInvalidRequest, "cron must not name a zone; set timeZone")
	case strings.HasPrefix(expr, "@every"):
		// @every counts from whenever it is asked, so replicas would not agree on the
		// tick: say it as a cron expression instead.
		return nil, Errorf(CodeInvalidRequest, "cron may not use @every; write the times as a cron expression (*/15 * * * *)")
	}
	if p == nil {
		return nil, Errorf(CodeServiceUnavailable, "this hub cannot read cron expressions")
	}
	spec, err := p.ParseCron(expr, loc)
	if err != nil {
		return nil, Errorf(CodeInvalidRequest, "cron %q is not a cron expression: %s", truncateRunes(expr, 64), truncateRunes(err.Error(), 200))
	}
	if spec.Next(now).IsZero() {
		return nil, Errorf(CodeInvalidRequest, "cron %q never comes round", truncateRunes(expr, 64))
	}
	return spec, nil
}

// applyScheduleInput validates in onto sc (a new schedule's defaults, or the stored
// one's fields), returning the parsed times. create requires what a new schedule
// needs. The project's existence is checked by the caller, in its transaction.
func applyScheduleInput(p CronParser, sc *Schedule, in ScheduleInput, create bool, now time.Time) (CronSpec, error) {
	if create {
		for _, f := range []struct {
			v    *string
			name string
		}{{in.Name, "name"}, {in.ProjectID, "projectId"}, {in.Agent, "agent"}, {in.Model, "model"}, {in.Prompt, "prompt"}, {in.Cron, "cron"}} {
			if f.v == nil {
				return nil, Errorf(CodeInvalidRequest, "%s is required", f.name)
			}
		}
	}
	if v := trimmed(in.Name); v != nil {
		if *v == "" || chars(*v) > maxScheduleName || strings.IndexFunc(*v, unicode.IsControl) >= 0 {
			return nil, Errorf(CodeInvalidRequest, "name must be 1 to %d characters on one line", maxScheduleName)
		}
		sc.Name = *v
	}
	if v := trimmed(in.ProjectID); v != nil {
		if !ValidID(*v, PrefixProject) {
			return nil, Errorf(CodeProjectNotFound, "no project with this id on this account")
		}
		sc.ProjectID = *v
	}
	if v := trimmed(in.Agent); v != nil {
		if !slices.Contains(AgentIDs, *v) {
			return nil, Errorf(CodeInvalidRequest, "agent must be one of %s", strings.Join(AgentIDs, ", "))
		}
		sc.Agent = *v
	}
	if v := trimmed(in.Model); v != nil {
		if *v == "" || chars(*v) > MaxModelChars || strings.IndexFunc(*v, unicode.IsControl) >= 0 {
			return nil, Errorf(CodeInvalidRequest, "model must be 1 to %d characters", MaxModelChars)
		}
		sc.Model = *v
	}
	if in.Prompt != nil { // as a workspace's first prompt is checked
		text := cleanText(*in.Prompt)
		if text == "" {
			return nil, Errorf(CodeInvalidPrompt, "prompt must not be empty")
		}
		if chars(text) > MaxTextChars {
			return nil, Errorf(CodeInvalidPrompt, "prompt must be at most %d characters", MaxTextChars)
		}
		sc.Prompt = text
	}
	if v := trimmed(in.Mode); v != nil {
		if !slices.Contains(ScheduleModes, *v) {
			return nil, Errorf(CodeInvalidRequest, "mode must be one of %s", strings.Join(ScheduleModes, ", "))
		}
		if *v != sc.Mode {
			sc.StandingWorkspaceID = "" // a standing workspace is the mode's: a new one when it comes back
		}
		sc.Mode = *v
	}
	if v := trimmed(in.Cron); v != nil {
		sc.Cron = *v
	}
	if v := trimmed(in.TimeZone); v != nil {
		sc.TimeZone = *v
	}
	return scheduleTimes(p, sc.Cron, sc.TimeZone, now)
}

// scheduleAuthor is the schedule as the author of its runs' workspaces and prompts.
func scheduleAuthor(sc *Schedule) *Author {
	return &Author{Kind: AuthorSchedule, ID: sc.ID, Name: sc.Name}
}
