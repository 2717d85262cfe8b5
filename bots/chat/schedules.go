package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wshub/wshub/core"
)

// The schedule commands: `schedules` lists the account's schedules (the channel's
// project's, when it has one); `schedule <cron> [in <zone>]: <prompt>` makes one on
// the channel's project; `schedule run|pause|resume|delete <id>` acts on one.

// Schedules is what the schedule commands ask of core's chat use cases.
type Schedules interface {
	ChatSchedules(ctx context.Context, sess *core.ChatSession) ([]*core.ScheduleView, error)
	ChatScheduleAction(ctx context.Context, sess *core.ChatSession, id, action string) (*core.Schedule, *core.ScheduleRun, error)
	ScheduleFromChat(ctx context.Context, sess *core.ChatSession, cron, zone, prompt string) (*core.Schedule, error)
}

// scheduleCommand reports whether the words after `schedule` are a schedule command:
// an action and an id, or an expression (starting with a digit, * or @) and a prompt
// after a colon. Anything else is a message for the agent ("schedule a call: ...").
func scheduleCommand(rest string) bool {
	if f := strings.Fields(rest); len(f) == 2 && isScheduleAction(strings.ToLower(f[0])) {
		return true
	}
	spec, prompt, ok := strings.Cut(rest, ":")
	spec = strings.Trim(strings.TrimSpace(spec), "`")
	return ok && strings.TrimSpace(prompt) != "" && spec != "" && strings.ContainsAny(spec[:1], "0123456789*@")
}

func isScheduleAction(w string) bool {
	return w == core.ScheduleActionRun || w == core.ScheduleActionPause || w == core.ScheduleActionResume ||
		w == core.ScheduleActionDelete
}

// splitSchedule reads `<cron> [in <zone>]: <prompt>`.
func splitSchedule(rest string) (cron, zone, prompt string) {
	spec, prompt, _ := strings.Cut(rest, ":")
	spec = strings.TrimSpace(strings.ReplaceAll(spec, "`", ""))
	if i := strings.LastIndex(spec, " in "); i >= 0 {
		spec, zone = spec[:i], strings.TrimSpace(spec[i+len(" in "):])
	}
	return strings.TrimSpace(spec), zone, strings.TrimSpace(prompt)
}

// schedule runs a schedule command and words its answer.
func (h *Handling) schedule(ctx context.Context, svc Threads, sess *core.ChatSession, word, arg string) (string, error) {
	p := h.Words
	if word == "schedules" {
		list, err := svc.ChatSchedules(ctx, sess)
		if err != nil {
			return "", err
		}
		return p.ScheduleList(list), nil
	}
	if f := strings.Fields(arg); len(f) == 2 && isScheduleAction(strings.ToLower(f[0])) {
		action := strings.ToLower(f[0])
		sc, run, err := svc.ChatScheduleAction(ctx, sess, f[1], action)
		if err != nil {
			return "", err
		}
		if action == core.ScheduleActionDelete {
			return p.ScheduleDeleted(sc), nil
		}
		return p.ScheduleActed(sc, run), nil
	}
	cron, zone, prompt := splitSchedule(arg)
	sc, err := svc.ScheduleFromChat(ctx, sess, cron, zone, prompt)
	var ce *core.Error
	if errors.As(err, &ce) && ce.Code == core.CodeInvalidRequest {
		// The detail names what was wrong with the expression or the zone, in words
		// written for people (core/schedule.go).
		return "I couldn't make that schedule: " + p.Literal(ce.Detail) + ". Write it as " +
			p.Code("schedule <minute> <hour> <day> <month> <weekday> [in <zone>]: <what to do>") + ", for example " +
			p.Code("schedule 0 9 * * 1 in Europe/Paris: update the deps") + ".", nil
	}
	if err != nil {
		return "", err
	}
	return "Scheduled " + p.scheduleLine(sc) + ". " + p.Code("schedule pause "+sc.ID) + " pauses it.", nil
}

// scheduleLine names a schedule: its id, name, expression and zone, and when it runs next.
func (p Platform) scheduleLine(sc *core.Schedule) string {
	next := "paused"
	if !sc.Paused {
		next = "next " + sc.NextTickAt.UTC().Format("2006-01-02 15:04 UTC")
	}
	each := "a new workspace each run"
	if sc.Mode == core.ScheduleModeStanding {
		each = "one standing workspace"
	}
	return fmt.Sprintf("%s %s: %s in %s, %s, %s", p.Code(sc.ID), p.Bold(p.Literal(sc.Name)), p.Code(sc.Cron), sc.TimeZone, each, next)
}

// ScheduleList is the `schedules` answer: each with its last run.
func (p Platform) ScheduleList(list []*core.ScheduleView) string {
	if len(list) == 0 {
		return "No schedules yet. " + p.Code("schedule 0 9 * * 1 in Europe/Paris: what to do") + " makes one."
	}
	lines := make([]string, len(list))
	for i, v := range list {
		lines[i] = "• " + p.scheduleLine(v.Schedule)
		if len(v.Runs) > 0 {
			lines[i] += "; last run " + p.runWords(v.Runs[0])
		}
	}
	return strings.Join(lines, "\n")
}

// ScheduleActed is the answer to run, pause or resume.
func (p Platform) ScheduleActed(sc *core.Schedule, run *core.ScheduleRun) string {
	if run != nil {
		return "Ran " + p.Code(sc.ID) + ": " + p.runWords(run) + "."
	}
	if sc.Paused {
		return "Paused " + p.scheduleLine(sc) + "."
	}
	return "Resumed " + p.scheduleLine(sc) + "."
}

// ScheduleDeleted is the answer to delete: what went, and what stays.
func (p Platform) ScheduleDeleted(sc *core.Schedule) string {
	return "Deleted " + p.Code(sc.ID) + " " + p.Bold(p.Literal(sc.Name)) + ": no more runs. The workspaces it started stay."
}

// runWords says how a run went.
func (p Platform) runWords(r *core.ScheduleRun) string {
	at := r.Tick.UTC().Format(time.DateTime) + " UTC"
	switch r.Outcome {
	case core.RunStarted:
		return "started workspace " + p.Code(r.WorkspaceID) + " (" + at + ")"
	case core.RunSent:
		return "sent to workspace " + p.Code(r.WorkspaceID) + " (" + at + ")"
	}
	return strings.ReplaceAll(r.Outcome, "_", " ") + " (" + at + "): " + p.Literal(r.Reason)
}
