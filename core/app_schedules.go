package core

import (
	"context"
	"slices"
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
	v := &SchedulesView{}
	if v.Projects, v.Agents, err = s.choices(ctx, acct); err != nil {
		return nil, err
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

// choices are what a schedule's form offers: the account's projects by id, and the
// agents.
func (s *AppSchedules) choices(ctx context.Context, acct *Account) (map[string]*Project, []string, error) {
	projects, err := accountProjects(ctx, s.schedules.store, acct)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]*Project, len(projects))
	for _, p := range projects {
		byID[p.ID] = p
	}
	agents := s.schedules.workspaces.ListAgents(ctx, acct)
	if len(agents) == 0 {
		// A hub with none installed yet: a schedule may still name one, as the API's
		// may; its runs say the agent is missing until it is there.
		agents = AgentIDs
	}
	return byID, agents, nil
}

// ScheduleForm is a schedule as its change form shows it (its prompt opened), with
// the choices the form offers, the schedule's own among them.
type ScheduleForm struct {
	Schedule *Schedule
	Projects map[string]*Project
	Agents   []string
}

// GetSchedule reads one of the account's schedules, its prompt opened, as the API's
// GET does.
func (s *AppSchedules) GetSchedule(ctx context.Context, a *AppSession, id string) (*Schedule, error) {
	acct, err := s.app.account(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.GetSchedule(ctx, acct, id)
}

// EditForm is the schedule with what its change form offers.
func (s *AppSchedules) EditForm(ctx context.Context, a *AppSession, id string) (*ScheduleForm, error) {
	acct, err := s.app.account(ctx, a)
	if err != nil {
		return nil, err
	}
	f := &ScheduleForm{}
	if f.Schedule, err = s.schedules.GetSchedule(ctx, acct, id); err != nil {
		return nil, err
	}
	if f.Projects, f.Agents, err = s.choices(ctx, acct); err != nil {
		return nil, err
	}
	if !slices.Contains(f.Agents, f.Schedule.Agent) {
		// Its agent, though not installed now, is kept unless changed: a form
		// without it would change it silently to the first choice.
		f.Agents = append(f.Agents[:len(f.Agents):len(f.Agents)], f.Schedule.Agent)
	}
	return f, nil
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

// UpdateSchedule changes what in names, with the API's rules (a changed expression or
// zone counts the next tick afresh), audited as the person.
func (s *AppSchedules) UpdateSchedule(ctx context.Context, a *AppSession, id string, in ScheduleInput) (*Schedule, error) {
	acct, who, err := s.caller(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.update(ctx, acct, id, in, who)
}

// DeleteSchedule removes the schedule and its run log (its workspaces stay), audited as
// the person, and answers it as it was.
func (s *AppSchedules) DeleteSchedule(ctx context.Context, a *AppSession, id string) (*Schedule, error) {
	acct, who, err := s.caller(ctx, a)
	if err != nil {
		return nil, err
	}
	return s.schedules.remove(ctx, acct, id, who, "")
}
