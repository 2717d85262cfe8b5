package web

import (
	"cmp"
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// The schedules page, for owners and members: the account's schedules (or one
// project's, ?project=) with their last runs, paused, resumed and run now. Schedules
// are made through the API and the wshub command.

// schedulesOf renders the page, saying notice at its top.
func (a *app) schedulesOf(c *fiber.Ctx, projectID, notice string) error {
	v, err := a.schedules.ListSchedules(c.UserContext(), sessionOf(c), projectID)
	if err != nil {
		return a.fail(c, err)
	}
	title := "Schedules"
	if v.Project != nil {
		title = "Schedules of " + cmp.Or(v.Project.DisplayName, v.Project.ID)
	}
	return a.render(c, fiber.StatusOK, "schedules", page{Title: title, Notice: notice, Data: v})
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
