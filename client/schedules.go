package client

import (
	"context"
	"net/http"
	"net/url"
)

// Schedules (an extension): a prompt run on a cron expression in a time zone, each
// run a new workspace or a message to one standing workspace.

// Schedule is a schedule as the hub shows it.
type Schedule struct {
	ScheduleID string `json:"scheduleId"`
	ProjectID  string `json:"projectId"`
	Name       string `json:"name"`
	Agent      string `json:"agent"`
	Model      string `json:"model"`
	Prompt     string `json:"prompt"`
	Cron       string `json:"cron"`
	TimeZone   string `json:"timeZone"`
	// Mode is "new" (a workspace per run) or "standing" (one workspace, a message
	// per run); StandingWorkspaceID is that workspace once the first run started it.
	Mode                string `json:"mode"`
	Paused              bool   `json:"paused"`
	StandingWorkspaceID string `json:"standingWorkspaceId,omitempty"`
	NextTickAt          Millis `json:"nextTickAt"`
	CreatedAt           Millis `json:"createdAt"`
	UpdatedAt           Millis `json:"updatedAt"`
}

// ScheduleInput is a schedule to make, or the fields to change ("" leaves a field
// out: the hub's default on create, unchanged on update).
type ScheduleInput struct {
	Name      string `json:"name,omitempty"`
	ProjectID string `json:"projectId,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Model     string `json:"model,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	Cron      string `json:"cron,omitempty"`
	TimeZone  string `json:"timeZone,omitempty"`
	Mode      string `json:"mode,omitempty"`
}

// ScheduleRun is one entry of a schedule's run log. Outcome is started, sent,
// skipped_late, refused or failed; Code and Reason say why one was refused.
type ScheduleRun struct {
	Tick        Millis `json:"tick"`
	Outcome     string `json:"outcome"`
	Code        string `json:"code,omitempty"`
	Reason      string `json:"reason,omitempty"`
	WorkspaceID string `json:"workspaceId,omitempty"`
	RecordedAt  Millis `json:"recordedAt"`
}

func schedulePath(id string, tail ...string) string {
	p := "/v1/api/schedules/" + url.PathEscape(id)
	for _, t := range tail {
		p += "/" + t
	}
	return p
}

// schedule sends req once (creates and runs are not retried: a retry could do them
// twice) or with the client's retries, and returns the answer's schedule.
func (c *Client) schedule(ctx context.Context, req request, once bool) (*Schedule, error) {
	var out struct {
		Schedule Schedule `json:"schedule"`
	}
	cl := *c
	if once {
		cl.retry.Attempts = 1
	}
	if _, err := cl.do(ctx, req, &out); err != nil {
		return nil, err
	}
	return &out.Schedule, nil
}

// CreateSchedule makes a schedule; it is not retried.
func (c *Client) CreateSchedule(ctx context.Context, in ScheduleInput) (*Schedule, error) {
	return c.schedule(ctx, request{method: http.MethodPost, path: "/v1/api/schedules", json: in}, true)
}

// UpdateSchedule changes the fields in sets.
func (c *Client) UpdateSchedule(ctx context.Context, id string, in ScheduleInput) (*Schedule, error) {
	return c.schedule(ctx, request{method: http.MethodPatch, path: schedulePath(id), json: in}, false)
}

// GetSchedule reads a schedule.
func (c *Client) GetSchedule(ctx context.Context, id string) (*Schedule, error) {
	return c.schedule(ctx, request{method: http.MethodGet, path: schedulePath(id)}, false)
}

// PauseSchedule stops its ticks until resumed.
func (c *Client) PauseSchedule(ctx context.Context, id string) (*Schedule, error) {
	return c.schedule(ctx, request{method: http.MethodPost, path: schedulePath(id, "pause")}, false)
}

// ResumeSchedule runs its ticks again from the next one.
func (c *Client) ResumeSchedule(ctx context.Context, id string) (*Schedule, error) {
	return c.schedule(ctx, request{method: http.MethodPost, path: schedulePath(id, "resume")}, false)
}

// ListSchedules lists the account's schedules, oldest first.
func (c *Client) ListSchedules(ctx context.Context) ([]Schedule, error) {
	var out struct {
		Schedules []Schedule `json:"schedules"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/api/schedules"}, &out)
	return out.Schedules, err
}

// DeleteSchedule removes a schedule and its run log; its workspaces stay.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, path: schedulePath(id)}, nil)
	return err
}

// RunSchedule runs a schedule now, paused or not, and returns the run (refused ones
// included); it is not retried.
func (c *Client) RunSchedule(ctx context.Context, id string) (*ScheduleRun, error) {
	var out struct {
		Run ScheduleRun `json:"run"`
	}
	once := *c
	once.retry.Attempts = 1
	if _, err := once.do(ctx, request{method: http.MethodPost, path: schedulePath(id, "run")}, &out); err != nil {
		return nil, err
	}
	return &out.Run, nil
}

// ListScheduleRuns lists the schedule's last 50 runs, newest first.
func (c *Client) ListScheduleRuns(ctx context.Context, id string) ([]ScheduleRun, error) {
	var out struct {
		Runs []ScheduleRun `json:"runs"`
	}
	_, err := c.do(ctx, request{method: http.MethodGet, path: schedulePath(id, "runs")}, &out)
	return out.Runs, err
}
