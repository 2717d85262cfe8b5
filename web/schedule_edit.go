package web

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// A schedule's change form and its delete, for owners and members as the rest of the
// schedules page. Both go through the API's use cases, audited as the person.

// scheduleEditData is the change form: the schedule's fields (or those sent, when
// refused), the choices, and the page to go back to.
type scheduleEditData struct {
	ID       string
	Within   string // the project whose schedules page it came from ("": all)
	Form     scheduleForm
	Projects map[string]*core.Project
	Agents   []string
}

// editSchedulePage shows the form filled from the schedule, its prompt opened.
func (a *app) editSchedulePage(c *fiber.Ctx) error {
	return a.scheduleEditWith(c, fiber.StatusOK, c.Query("project"), "", nil)
}

// scheduleEditWith renders the change form, filled from sent when it is not nil and
// from the stored schedule otherwise, saying notice at its top.
func (a *app) scheduleEditWith(c *fiber.Ctx, status int, within, notice string, sent *scheduleForm) error {
	f, err := a.schedules.EditForm(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	sc := f.Schedule
	d := scheduleEditData{ID: sc.ID, Within: within, Projects: f.Projects, Agents: f.Agents,
		Form: scheduleForm{Name: sc.Name, Project: sc.ProjectID, Agent: sc.Agent, Model: sc.Model, Prompt: sc.Prompt,
			Cron: sc.Cron, TimeZone: sc.TimeZone, Mode: sc.Mode}}
	if sent != nil {
		d.Form = *sent
	}
	return a.render(c, status, "schedule-edit", page{Title: "Change " + sc.Name, Notice: notice, Data: d})
}

// updateSchedule saves the change form. Every field is sent as it stands, so a field
// emptied is refused as the create form refuses it, except the zone, whose blank is
// UTC there too. A refusal is said at the form's top, kept as sent, and changes nothing.
func (a *app) updateSchedule(c *fiber.Ctx) error {
	f := scheduleFormOf(c)
	zone := f.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	in := core.ScheduleInput{Name: &f.Name, ProjectID: &f.Project, Agent: &f.Agent, Model: &f.Model, Prompt: &f.Prompt,
		Cron: &f.Cron, TimeZone: &zone, Mode: &f.Mode}
	sc, err := a.schedules.UpdateSchedule(c.UserContext(), sessionOf(c), c.Params("id"), in)
	if status, why, ok := refusedForm(err); ok {
		return a.scheduleEditWith(c, status, c.FormValue("within"), why, &f)
	}
	if err != nil {
		return a.fail(c, err)
	}
	notice := "Saved " + sc.Name + ": its next tick is " + sc.NextTickAt.UTC().Format("2006-01-02 15:04 UTC") + "."
	if sc.Paused {
		notice = "Saved " + sc.Name + "; it stays paused."
	}
	return a.schedulesOf(c, c.FormValue("within"), notice)
}

// confirmDeleteSchedule asks before a delete, naming the schedule.
func (a *app) confirmDeleteSchedule(c *fiber.Ctx) error {
	sc, err := a.schedules.GetSchedule(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	action, back := "/app/schedules/"+sc.ID+"/delete", "/app/schedules"
	if p := c.Query("project"); p != "" {
		q := "?" + url.Values{"project": {p}}.Encode()
		action, back = action+q, back+q
	}
	return a.render(c, fiber.StatusOK, "confirm", page{Title: "Delete the schedule", Data: confirmation{
		Question:    "Delete the schedule " + sc.Name + "?",
		Consequence: "It runs no more, and its run log goes with it. The workspaces its runs started stay.",
		Action:      action, Yes: "Delete it", Back: back, No: "Keep it"}})
}

// deleteSchedule deletes it and shows the page it was asked from.
func (a *app) deleteSchedule(c *fiber.Ctx) error {
	sc, err := a.schedules.DeleteSchedule(c.UserContext(), sessionOf(c), c.Params("id"))
	if err != nil {
		return a.fail(c, err)
	}
	return a.schedulesOf(c, c.Query("project"), "Deleted "+sc.Name+": it runs no more. The workspaces it started stay.")
}
