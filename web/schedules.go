package web

import (
	"cmp"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The schedules page, for owners and members: the account's schedules (or one
// project's, ?project=) with their last runs, made, paused, resumed and run now.

// schedulesOf renders the page, saying notice at its top.
func (a *app) schedulesOf(c *fiber.Ctx, projectID, notice string) error {
	return a.schedulesPageWith(c, fiber.StatusOK, projectID, notice, scheduleForm{})
}

// scheduleForm is the new-schedule form as it was sent, kept when it is refused.
type scheduleForm struct {
	Name, Project, Agent, Model, Prompt, Cron, TimeZone, Mode string
}

// schedulesPageData is the page: the schedules and the form.
type schedulesPageData struct {
	*core.SchedulesView
	Form scheduleForm
}

func (a *app) schedulesPageWith(c *fiber.Ctx, status int, projectID, notice string, form scheduleForm) error {
	v, err := a.schedules.ListSchedules(c.UserContext(), sessionOf(c), projectID)
	if err != nil {
		return a.fail(c, err)
	}
	form.Project = cmp.Or(form.Project, projectID) // a project's page offers its own first
	title := "Schedules"
	if v.Project != nil {
		title = "Schedules of " + cmp.Or(v.Project.DisplayName, v.Project.ID)
	}
	return a.render(c, status, "schedules", page{Title: title, Notice: notice, Data: schedulesPageData{SchedulesView: v, Form: form}})
}

// createSchedule makes a schedule from the page's form. What the form got wrong (or a
// quota that refuses it) is said at the page's top, with the form as it was sent.
func (a *app) createSchedule(c *fiber.Ctx) error {
	f := scheduleFormOf(c)
	given := func(v string) *string { // a blank field takes the schedule's default
		if strings.TrimSpace(v) == "" {
			return nil
		}
		return &v
	}
	sc, err := a.schedules.CreateSchedule(c.UserContext(), sessionOf(c), core.ScheduleInput{Name: given(f.Name),
		ProjectID: given(f.Project), Agent: given(f.Agent), Model: given(f.Model), Prompt: given(f.Prompt),
		Cron: given(f.Cron), TimeZone: given(f.TimeZone), Mode: given(f.Mode)})
	if status, why, ok := refusedForm(err); ok {
		return a.schedulesPageWith(c, status, c.FormValue("within"), why, f)
	}
	if err != nil {
		return a.fail(c, err)
	}
	return a.schedulesPageWith(c, fiber.StatusCreated, c.FormValue("within"), "Made "+sc.Name+": its next tick is "+
		sc.NextTickAt.UTC().Format("2006-01-02 15:04 UTC")+".", scheduleForm{})
}

// scheduleFormOf reads a schedule's form as it was sent.
func scheduleFormOf(c *fiber.Ctx) scheduleForm {
	return scheduleForm{Name: c.FormValue("name"), Project: c.FormValue("project"), Agent: c.FormValue("agent"),
		Model: c.FormValue("model"), Prompt: c.FormValue("prompt"), Cron: c.FormValue("cron"),
		TimeZone: c.FormValue("timeZone"), Mode: c.FormValue("mode")}
}

// refusedForm is core's refusal of what a form said (a field, a quota), with its
// status and words; ok is false for anything else, which is the error page's.
func refusedForm(err error) (status int, why string, ok bool) {
	var ce *core.Error
	if errors.As(err, &ce) {
		if status, known := core.HTTPStatus(ce.Code); known && status < 500 {
			return status, ce.Detail, true
		}
	}
	return 0, "", false
}

func (a *app) schedulesPage(c *fiber.Ctx) error {
	return a.schedulesOf(c, c.Query("project"), "")
}

// scheduleAction pauses, resumes or runs a schedule, then shows the page it was on
// (its project's, when the form says so) with what happened.
func (a *app) scheduleAction(c *fiber.Ctx) error {
	ctx, s, id := c.UserContext(), sessionOf(c), c.Params("id")
	var notice string
	switch c.Params("action") {
	case "pause":
		sc, err := a.schedules.PauseSchedule(ctx, s, id)
		if err != nil {
			return a.fail(c, err)
		}
		notice = "Paused " + sc.Name + ": no tick runs until it is resumed."
	case "resume":
		sc, err := a.schedules.ResumeSchedule(ctx, s, id)
		if err != nil {
			return a.fail(c, err)
		}
		notice = "Resumed " + sc.Name + ": the next tick runs it."
	case "run":
		run, err := a.schedules.RunScheduleNow(ctx, s, id)
		var ce *core.Error
		if errors.As(err, &ce) && ce.Code != core.CodeScheduleNotFound {
			notice = "Not run: " + ce.Detail
			break
		}
		if err != nil {
			return a.fail(c, err)
		}
		notice = runNotice(run)
	}
	return a.schedulesOf(c, c.FormValue("project"), notice)
}

// runNotice says how a run now went.
func runNotice(r *core.ScheduleRun) string {
	switch r.Outcome {
	case core.RunStarted:
		return "Started workspace " + r.WorkspaceID + "."
	case core.RunSent:
		return "Sent the prompt to workspace " + r.WorkspaceID + "."
	}
	return "Not run: " + r.Reason
}
