package core

import (
	"context"
)

// AppSchedules are the app's schedules page, on the session's account: the schedules
// (all, or a project's) with their last runs, paused, resumed and run now by its owners and
// members alike (a member may start workspaces, which is all a run does). Each change
// is in the audit log.
type AppSchedules struct {
	app       *App
	schedules *Schedules
}

// appScheduleRuns is how many of each schedule's runs the page shows.
const appScheduleRuns = 5

// ScheduleView is a schedule with its newest runs, newest first.
type ScheduleView struct {
	*Schedule
	Runs []*ScheduleRun
}

// SchedulesView is the schedules page: the schedules of one project, or of every
// project the account has, with the projects by id to name them.
type SchedulesView struct {
	Project   *Project // the one asked for (nil: all)
	Projects  map[string]*Project
	Schedules []*ScheduleView
	// Agents are the agents a new schedule may name (the form's choices).
	Agents []string
}

// ListSchedules lists the account's schedules (of projectID alone unless it is ""),
// oldest first, each with its last runs.
func (s *AppSchedules) ListSchedules(ctx context.Context, a *AppSession, projectID string) (*SchedulesView, error) {
	acct, err := s.app.account(ctx, a)
	if err != nil {
		return nil, err
	}
	projects, err := accountProjects(ctx, s.schedules.store, acct)
	if err != nil {
		return nil, err
	}
	v := &SchedulesView{Projects: map[string]*Project{}, Agents: s.schedules.workspaces.ListAgents(ctx, acct)}
	if len(v.Agents) == 0 {
		// A hub with none installed yet: a schedule may still name one, as the API's
		// may; its runs say the agent is missing until it is there.
		v.Agents = AgentIDs
	}
	for _, p := range projects {
		v.Projects[p.ID] = p
	}
	if projectID != "" {
		if v.Project = v.Projects[projectID]; v.Project == nil {
			return nil, Errorf(CodeProjectNotFound, "no project with this id on this account")
		}
	}
	list, err := s.schedules.ListSchedules(ctx, acct)
	if err != nil {
		return nil, err
	}
	for _, sc := range list {
		if projectID != "" && sc.ProjectID != projectID {
			continue
		}
		runs, err := s.schedules.store.ListScheduleRuns(ctx, sc.ID, appScheduleRuns)
		if err != nil {
			return nil, err
		}
		v.Schedules = append(v.Schedules, &ScheduleView{Schedule: sc, Runs: runs})
	}
	return v, nil
}

// caller is the session's account, and its person as the audit log names them.
func (s *AppSchedules) caller(ctx context.Context, a *AppSession) (*Account, *actor, error) {
	acct, err := s.app.account(ctx, a)
	who := a.actor()
	return acct, &who, err
}

// CreateSchedule makes a schedule on one of the account's projects (owners and
// members: a run only starts a workspace, which a member may), audited as the person.
func (s *AppSchedules) CreateSchedule(ctx context.Context, a *AppSession, in ScheduleInput) (*Schedule, error) {
	acct, who, err := s.caller(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.create(ctx, acct, in, who)
}

// PauseSchedule stops the schedule's ticks until resumed.
func (s *AppSchedules) PauseSchedule(ctx context.Context, a *AppSession, id string) (*Schedule, error) {
	acct, who, err := s.caller(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.pause(ctx, acct, id, who)
}

// ResumeSchedule runs its ticks again from the next one after now.
func (s *AppSchedules) ResumeSchedule(ctx context.Context, a *AppSession, id string) (*Schedule, error) {
	acct, who, err := s.caller(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.resume(ctx, acct, id, who)
}

// RunScheduleNow runs the schedule once, now, and returns the run (a refused one too).
func (s *AppSchedules) RunScheduleNow(ctx context.Context, a *AppSession, id string) (*ScheduleRun, error) {
	acct, who, err := s.caller(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.runNow(ctx, acct, id, who)
}
