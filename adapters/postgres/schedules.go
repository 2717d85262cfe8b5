package postgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/wshub/wshub/core"
)

type scheduleRow struct {
	ID                  string         `db:"id"`
	AccountID           string         `db:"account_id"`
	ProjectID           string         `db:"project_id"`
	Name                string         `db:"name"`
	Agent               string         `db:"agent"`
	Model               string         `db:"model"`
	PromptSealed        []byte         `db:"prompt_sealed"`
	Cron                string         `db:"cron"`
	Zone                string         `db:"zone"`
	Mode                string         `db:"mode"`
	Paused              bool           `db:"paused"`
	StandingWorkspaceID sql.NullString `db:"standing_workspace_id"`
	NextTickAt          time.Time      `db:"next_tick_at"`
	CreatedAt           time.Time      `db:"created_at"`
	UpdatedAt           time.Time      `db:"updated_at"`
}

func (r scheduleRow) schedule() *core.StoredSchedule {
	return &core.StoredSchedule{Schedule: core.Schedule{
		ID: r.ID, AccountID: r.AccountID, ProjectID: r.ProjectID, Name: r.Name, Agent: r.Agent, Model: r.Model,
		Cron: r.Cron, TimeZone: r.Zone, Mode: r.Mode, Paused: r.Paused, StandingWorkspaceID: r.StandingWorkspaceID.String,
		NextTickAt: r.NextTickAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, SealedPrompt: r.PromptSealed}
}

const scheduleColumns = `id, account_id, project_id, name, agent, model, prompt_sealed, cron, zone, mode, paused,
	standing_workspace_id, next_tick_at, created_at, updated_at`

func (q queries) getSchedule(ctx context.Context, where string, args ...any) (*core.StoredSchedule, error) {
	var r scheduleRow
	if err := q.get(ctx, &r, `SELECT `+scheduleColumns+` FROM schedules WHERE `+where, args...); err != nil {
		return nil, err
	}
	return r.schedule(), nil
}

func (q queries) InsertSchedule(ctx context.Context, s *core.StoredSchedule) (err error) {
	defer wrapErr(&err, "insert schedule")
	_, err = q.exec(ctx, `INSERT INTO schedules (`+scheduleColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		s.ID, s.AccountID, s.ProjectID, s.Name, s.Agent, s.Model, s.SealedPrompt, s.Cron, s.TimeZone, s.Mode, s.Paused,
		nullString(s.StandingWorkspaceID), s.NextTickAt, s.CreatedAt, s.UpdatedAt)
	return err
}

// GetSchedule is a primary-key lookup, narrowed to the account.
func (q queries) GetSchedule(ctx context.Context, accountID, id string) (_ *core.StoredSchedule, err error) {
	defer wrapErr(&err, "get schedule")
	return q.getSchedule(ctx, `id = $1 AND account_id = $2`, id, accountID)
}

// LockSchedule waits for the row: an owner's change or "run now" after the runner.
func (q queries) LockSchedule(ctx context.Context, accountID, id string) (_ *core.StoredSchedule, err error) {
	defer wrapErr(&err, "lock schedule")
	return q.getSchedule(ctx, `id = $1 AND account_id = $2 FOR UPDATE`, id, accountID)
}

// LockDueSchedule skips a row another replica holds: that replica runs its tick.
func (q queries) LockDueSchedule(ctx context.Context, id string) (_ *core.StoredSchedule, err error) {
	defer wrapErr(&err, "lock due schedule")
	return q.getSchedule(ctx, `id = $1 FOR UPDATE SKIP LOCKED`, id)
}

// CountSchedules uses schedules_account, under the account's lock.
func (q queries) CountSchedules(ctx context.Context, accountID string) (_ int, err error) {
	defer wrapErr(&err, "count schedules")
	var n int
	err = q.get(ctx, &n, `SELECT count(*) FROM schedules WHERE account_id = $1`, accountID)
	return n, err
}

// ListSchedules uses schedules_account.
func (q queries) ListSchedules(ctx context.Context, accountID string) (_ []*core.StoredSchedule, err error) {
	defer wrapErr(&err, "list schedules")
	var rows []scheduleRow
	if err := q.selectAll(ctx, &rows, `SELECT `+scheduleColumns+` FROM schedules WHERE account_id = $1
		ORDER BY created_at, id`, accountID); err != nil {
		return nil, err
	}
	out := make([]*core.StoredSchedule, len(rows))
	for i, r := range rows {
		out[i] = r.schedule()
	}
	return out, nil
}

func (q queries) UpdateSchedule(ctx context.Context, s *core.StoredSchedule) (err error) {
	defer wrapErr(&err, "update schedule")
	_, err = q.exec(ctx, `UPDATE schedules SET project_id = $2, name = $3, agent = $4, model = $5, prompt_sealed = $6,
		cron = $7, zone = $8, mode = $9, paused = $10, standing_workspace_id = $11, next_tick_at = $12, updated_at = $13
		WHERE id = $1`, s.ID, s.ProjectID, s.Name, s.Agent, s.Model, s.SealedPrompt, s.Cron, s.TimeZone, s.Mode, s.Paused,
		nullString(s.StandingWorkspaceID), s.NextTickAt, s.UpdatedAt)
	return err
}

func (q queries) DeleteSchedule(ctx context.Context, accountID, id string) (_ bool, err error) {
	defer wrapErr(&err, "delete schedule")
	n, err := q.exec(ctx, `DELETE FROM schedules WHERE id = $1 AND account_id = $2`, id, accountID)
	return n == 1, err
}

// DueSchedules uses schedules_due.
func (q queries) DueSchedules(ctx context.Context, now time.Time, limit int) (_ []string, err error) {
	defer wrapErr(&err, "due schedules")
	var ids []string
	err = q.selectAll(ctx, &ids, `SELECT id FROM schedules WHERE NOT paused AND next_tick_at <= $1
		ORDER BY next_tick_at LIMIT $2`, now, limit)
	return ids, err
}

// NextScheduleTick uses schedules_due (its first entry).
func (q queries) NextScheduleTick(ctx context.Context) (_ time.Time, err error) {
	defer wrapErr(&err, "next schedule tick")
	var t time.Time
	err = q.get(ctx, &t, `SELECT next_tick_at FROM schedules WHERE NOT paused ORDER BY next_tick_at LIMIT 1`)
	return t, err
}

// InsertScheduleRun prunes with schedule_runs_schedule: the runs past the newest keep.
func (q queries) InsertScheduleRun(ctx context.Context, r *core.ScheduleRun, keep int) (err error) {
	defer wrapErr(&err, "insert schedule run")
	if _, err := q.exec(ctx, `INSERT INTO schedule_runs (schedule_id, tick, outcome, code, reason, workspace_id, recorded_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, r.ScheduleID, r.Tick, r.Outcome, r.Code, r.Reason, nullString(r.WorkspaceID),
		r.RecordedAt); err != nil {
		return err
	}
	_, err = q.exec(ctx, `DELETE FROM schedule_runs WHERE schedule_id = $1 AND seq < (
		SELECT seq FROM schedule_runs WHERE schedule_id = $1 ORDER BY seq DESC OFFSET $2 - 1 LIMIT 1)`, r.ScheduleID, keep)
	return err
}

type scheduleRunRow struct {
	ScheduleID  string         `db:"schedule_id"`
	Tick        time.Time      `db:"tick"`
	Outcome     string         `db:"outcome"`
	Code        string         `db:"code"`
	Reason      string         `db:"reason"`
	WorkspaceID sql.NullString `db:"workspace_id"`
	RecordedAt  time.Time      `db:"recorded_at"`
}

// ListScheduleRuns uses schedule_runs_schedule.
func (q queries) ListScheduleRuns(ctx context.Context, scheduleID string, limit int) (_ []*core.ScheduleRun, err error) {
	defer wrapErr(&err, "list schedule runs")
	var rows []scheduleRunRow
	if err := q.selectAll(ctx, &rows, `SELECT schedule_id, tick, outcome, code, reason, workspace_id, recorded_at
		FROM schedule_runs WHERE schedule_id = $1 ORDER BY seq DESC LIMIT $2`, scheduleID, limit); err != nil {
		return nil, err
	}
	out := make([]*core.ScheduleRun, len(rows))
	for i, r := range rows {
		out[i] = &core.ScheduleRun{ScheduleID: r.ScheduleID, Tick: r.Tick, Outcome: r.Outcome, Code: r.Code, Reason: r.Reason,
			WorkspaceID: r.WorkspaceID.String, RecordedAt: r.RecordedAt}
	}
	return out, nil
}
