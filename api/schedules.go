package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// Schedules (an extension): /v1/api/schedules, with the workspaces' scopes.

// scheduleJSON is a schedule as the API shows it.
type scheduleJSON struct {
	ScheduleID          string `json:"scheduleId"`
	ProjectID           string `json:"projectId"`
	Name                string `json:"name"`
	Agent               string `json:"agent"`
	Model               string `json:"model"`
	Prompt              string `json:"prompt"`
	Cron                string `json:"cron"`
	TimeZone            string `json:"timeZone"`
	Mode                string `json:"mode"`
	Paused              bool   `json:"paused"`
	StandingWorkspaceID string `json:"standingWorkspaceId,omitempty"`
	NextTickAt          int64  `json:"nextTickAt"`
	CreatedAt           int64  `json:"createdAt"`
	UpdatedAt           int64  `json:"updatedAt"`
}

func toSchedule(s *core.Schedule) scheduleJSON {
	return scheduleJSON{ScheduleID: s.ID, ProjectID: s.ProjectID, Name: s.Name, Agent: s.Agent, Model: s.Model, Prompt: s.Prompt,
		Cron: s.Cron, TimeZone: s.TimeZone, Mode: s.Mode, Paused: s.Paused, StandingWorkspaceID: s.StandingWorkspaceID,
		NextTickAt: ms(s.NextTickAt), CreatedAt: ms(s.CreatedAt), UpdatedAt: ms(s.UpdatedAt)}
}

// scheduleRunJSON is one entry of a schedule's run log.
type scheduleRunJSON struct {
	Tick        int64  `json:"tick"`
	Outcome     string `json:"outcome"`
	Code        string `json:"code,omitempty"`
	Reason      string `json:"reason,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	RecordedAt  int64  `json:"recordedAt"`
}

func toScheduleRun(r *core.ScheduleRun) scheduleRunJSON {
	return scheduleRunJSON{Tick: ms(r.Tick), Outcome: r.Outcome, Code: r.Code, Reason: r.Reason, WorkspaceID: r.WorkspaceID,
		RecordedAt: ms(r.RecordedAt)}
}

// decodeSchedule turns a create or update body into core input.
func decodeSchedule(body []byte) (core.ScheduleInput, error) {
	fields, err := jsonObject(body, true)
	if err != nil {
		return core.ScheduleInput{}, err
	}
	f, err := stringFields(fields, "name", "projectId", "agent", "model", "prompt", "cron", "timeZone", "mode")
	if err != nil {
		return core.ScheduleInput{}, err
	}
	return core.ScheduleInput{Name: f["name"], ProjectID: f["projectId"], Agent: f["agent"], Model: f["model"], Prompt: f["prompt"],
		Cron: f["cron"], TimeZone: f["timeZone"], Mode: f["mode"]}, nil
}

// scheduleBody answers a schedule, or the use case's error.
func (s *server) scheduleBody(c *fiber.Ctx, status int, sc *core.Schedule, err error) error {
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.Status(status).JSON(fiber.Map{"schedule": toSchedule(sc)})
}

func (s *server) createSchedule(c *fiber.Ctx) error {
	in, err := scheduleRequest(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	sc, err := s.svc.CreateSchedule(c.UserContext(), account(c), in)
	return s.scheduleBody(c, fiber.StatusCreated, sc, err)
}

func (s *server) updateSchedule(c *fiber.Ctx) error {
	in, err := scheduleRequest(c)
	if err != nil {
		return writeError(c, s.log, err)
	}
	sc, err := s.svc.UpdateSchedule(c.UserContext(), account(c), param(c, "scheduleId"), in)
	return s.scheduleBody(c, fiber.StatusOK, sc, err)
}

// scheduleRequest reads and decodes a create or update body.
func scheduleRequest(c *fiber.Ctx) (core.ScheduleInput, error) {
	body, err := requestBody(c, core.CodeInvalidJSON)
	if err != nil {
		return core.ScheduleInput{}, err
	}
	return decodeSchedule(body)
}

func (s *server) listSchedules(c *fiber.Ctx) error {
	list, err := s.svc.ListSchedules(c.UserContext(), account(c))
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := make([]scheduleJSON, len(list))
	for i, sc := range list {
		out[i] = toSchedule(sc)
	}
	return c.JSON(fiber.Map{"schedules": out})
}

func (s *server) getSchedule(c *fiber.Ctx) error {
	sc, err := s.svc.GetSchedule(c.UserContext(), account(c), param(c, "scheduleId"))
	return s.scheduleBody(c, fiber.StatusOK, sc, err)
}

func (s *server) pauseSchedule(c *fiber.Ctx) error {
	sc, err := s.svc.PauseSchedule(c.UserContext(), account(c), param(c, "scheduleId"))
	return s.scheduleBody(c, fiber.StatusOK, sc, err)
}

func (s *server) resumeSchedule(c *fiber.Ctx) error {
	sc, err := s.svc.ResumeSchedule(c.UserContext(), account(c), param(c, "scheduleId"))
	return s.scheduleBody(c, fiber.StatusOK, sc, err)
}

func (s *server) deleteSchedule(c *fiber.Ctx) error {
	if err := s.svc.DeleteSchedule(c.UserContext(), account(c), param(c, "scheduleId")); err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(fiber.Map{"ok": true})
}

// runSchedule runs it now; the run, refused or not, is in the answer and the log.
func (s *server) runSchedule(c *fiber.Ctx) error {
	run, err := s.svc.RunScheduleNow(c.UserContext(), account(c), param(c, "scheduleId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	return c.JSON(fiber.Map{"run": toScheduleRun(run)})
}

func (s *server) listScheduleRuns(c *fiber.Ctx) error {
	runs, err := s.svc.ListScheduleRuns(c.UserContext(), account(c), param(c, "scheduleId"))
	if err != nil {
		return writeError(c, s.log, err)
	}
	out := make([]scheduleRunJSON, len(runs))
	for i, r := range runs {
		out[i] = toScheduleRun(r)
	}
	return c.JSON(fiber.Map{"runs": out})
}
