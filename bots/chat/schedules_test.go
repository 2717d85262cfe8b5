package chat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// made records ScheduleFromChat's arguments.
type made struct{ cron, zone, prompt string }

var (
	scheduleAt = time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	aSchedule  = &core.Schedule{ID: "sch_1", Name: "deps *now*", Cron: "0 9 * * 1", TimeZone: "Europe/Paris",
		Mode: core.ScheduleModeNew, NextTickAt: scheduleAt}
	lastMade made
)

func (t *threads) ChatSchedules(context.Context, *core.ChatSession) ([]*core.ScheduleView, error) {
	return []*core.ScheduleView{{Schedule: aSchedule, Runs: []*core.ScheduleRun{{Tick: scheduleAt.Add(-7 * 24 * time.Hour),
		Outcome: core.RunRefused, Reason: "the account has 5 live workspaces"}}}}, t.err
}

func (t *threads) ChatScheduleAction(_ context.Context, _ *core.ChatSession, id, action string) (*core.Schedule, *core.ScheduleRun, error) {
	sc := *aSchedule
	switch action {
	case core.ScheduleActionRun:
		return &sc, &core.ScheduleRun{Tick: scheduleAt, Outcome: core.RunStarted, WorkspaceID: "ws_9"}, t.err
	case core.ScheduleActionPause:
		sc.Paused = true
	}
	return &sc, nil, t.err
}

func (t *threads) ScheduleFromChat(_ context.Context, _ *core.ChatSession, cron, zone, prompt string) (*core.Schedule, error) {
	lastMade = made{cron, zone, prompt}
	return aSchedule, t.err
}

func TestScheduleCommandsAreTakenOnlyWhenTheyLookLikeOne(t *testing.T) {
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"schedules", true},
		{"schedules of the team", false},
		{"schedule run sch_1", true},
		{"schedule PAUSE sch_1", true},
		{"schedule delete sch_1", true},
		{"schedule delete the old ones", false},
		{"schedule resume", false},
		{"schedule 0 9 * * 1 in Europe/Paris: update the deps", true},
		{"schedule `0 9 * * 1`: update the deps", true},
		{"schedule @daily: triage", true},
		{"schedule a call with Ada: tomorrow", false},
		{"schedule 0 9 * * 1", false},
		{"schedule 0 9 * * 1:", false},
	} {
		if _, _, ok := parseCommand(c.text); ok != c.ok {
			t.Errorf("parseCommand(%q): expected a command %v, got %v", c.text, c.ok, ok)
		}
	}
}

func TestScheduleCommandsAnswers(t *testing.T) {
	svc := &threads{}
	for _, c := range []struct {
		text, want string
	}{
		{"schedules", "• `sch_1` *deps *now**: `0 9 * * 1` in Europe/Paris, a new workspace each run, next 2026-12-07 08:00 UTC; " +
			"last run refused (2026-11-30 08:00:00 UTC): the account has 5 live workspaces"},
		{"schedule run sch_1", "Ran `sch_1`: started workspace `ws_9` (2026-12-07 08:00:00 UTC)."},
		{"schedule pause sch_1", "Paused `sch_1` *deps *now**: `0 9 * * 1` in Europe/Paris, a new workspace each run, paused."},
		{"schedule Delete sch_1", "Deleted `sch_1` *deps *now**: no more runs. The workspaces it started stay."},
		{"schedule `0 9 * * 1` in Europe/Paris: update the deps", "Scheduled `sch_1` *deps *now**: `0 9 * * 1` in Europe/Paris, " +
			"a new workspace each run, next 2026-12-07 08:00 UTC. `schedule pause sch_1` pauses it."},
	} {
		handled, said, err := say(t, Slack, svc, c.text)
		if !handled || err != nil || said != c.want {
			t.Errorf("%q: expected %q, got %v %v %q", c.text, c.want, handled, err, said)
		}
	}
	if want := (made{"0 9 * * 1", "Europe/Paris", "update the deps"}); lastMade != want {
		t.Errorf("expected the schedule made with %+v, got %+v", want, lastMade)
	}
	svc.err = core.Errorf(core.CodeScheduleNotFound, "no schedule with this id on this account")
	if _, said, _ := say(t, Slack, svc, "schedule delete sch_2"); !strings.HasPrefix(said, "I don't know that schedule here.") {
		t.Errorf("expected an unknown schedule said in words, got %q", said)
	}
	svc.err = core.Errorf(core.CodeInvalidRequest, `cron "99 * * * *" is not a cron expression: end of range (99) above maximum (59): 99`)
	handled, said, err := say(t, Slack, svc, "schedule 99 * * * *: x")
	if want := "I couldn't make that schedule: cron \"99 * * * *\" is not a cron expression"; !handled || err != nil || !strings.HasPrefix(said, want) ||
		!strings.Contains(said, "`schedule 0 9 * * 1 in Europe/Paris: update the deps`") {
		t.Errorf("expected a bad expression said in words with an example, got %v %v %q", handled, err, said)
	}
	if !strings.Contains(Slack.Help("U0BOT"), "schedules") {
		t.Errorf("expected the help to name the schedule commands")
	}
}
