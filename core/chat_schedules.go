package core

import (
	"context"
	"strings"
)

// Schedules from a bound channel: listed, run now, paused, resumed and deleted, and
// made on the channel's project with the binding's agent and model. The same use cases
// as the API's, on the binding's account; changes are audited as the channel's.

// chatActor is a change made from a chat channel (the platform does not say who to
// the commands: the channel does).
func chatActor(sess *ChatSession) *actor {
	return &actor{id: sess.Place.Platform + ":" + sess.Place.ChannelID, name: "a " + sess.Place.Platform + " channel"}
}

// ChatSchedules lists the account's schedules (of the channel's project, when it has
// one), oldest first, each with its newest run.
func (s *Chat) ChatSchedules(ctx context.Context, sess *ChatSession) ([]*ScheduleView, error) {
	list, err := s.schedules.ListSchedules(ctx, sess.Account)
	if err != nil {
		return nil, err
	}
	var out []*ScheduleView
	for _, sc := range list {
		if sess.ChannelProject != "" && sc.ProjectID != sess.ChannelProject {
			continue
		}
		runs, err := s.schedules.store.ListScheduleRuns(ctx, sc.ID, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, &ScheduleView{Schedule: sc, Runs: runs})
	}
	return out, nil
}

// Chat schedule actions.
const (
	ScheduleActionRun    = "run"
	ScheduleActionPause  = "pause"
	ScheduleActionResume = "resume"
	ScheduleActionDelete = "delete"
)

// ChatScheduleAction runs, pauses, resumes or deletes one of the account's schedules;
// a run answers how it went (a refused one too), a delete the schedule as it was. A
// channel with a project reaches only that project's schedules, those it lists.
func (s *Chat) ChatScheduleAction(ctx context.Context, sess *ChatSession, id, action string) (*Schedule, *ScheduleRun, error) {
	who := chatActor(sess)
	if sess.ChannelProject != "" && action != ScheduleActionDelete { // the delete checks in its transaction
		sc, err := s.schedules.GetSchedule(ctx, sess.Account, id)
		if err != nil {
			return nil, nil, err
		}
		if sc.ProjectID != sess.ChannelProject {
			return nil, nil, errNoSchedule
		}
	}
	switch action {
	case ScheduleActionRun:
		run, err := s.schedules.runNow(ctx, sess.Account, id, who)
		if err != nil {
			return nil, nil, err
		}
		sc, err := s.schedules.GetSchedule(ctx, sess.Account, id)
		return sc, run, err
	case ScheduleActionPause:
		sc, err := s.schedules.pause(ctx, sess.Account, id, who)
		return sc, nil, err
	case ScheduleActionResume:
		sc, err := s.schedules.resume(ctx, sess.Account, id, who)
		return sc, nil, err
	case ScheduleActionDelete:
		sc, err := s.schedules.remove(ctx, sess.Account, id, who, sess.ChannelProject)
		return sc, nil, err
	}
	return nil, nil, Errorf(CodeInvalidRequest, "no schedule action %q", action)
}

// ScheduleFromChat makes a schedule of prompt on cron in zone ("": UTC), on the
// channel's project (else the binding's), with the binding's agent and model (else
// the account's newest workspace's). Its name is the prompt's first line.
func (s *Chat) ScheduleFromChat(ctx context.Context, sess *ChatSession, cron, zone, prompt string) (*Schedule, error) {
	project := firstNonEmpty(sess.ChannelProject, sess.Binding.ProjectID)
	if project == "" {
		return nil, Errorf(CodeChatProjectUnknown, "this channel has no project; set one with use first")
	}
	agent, model, err := s.workspaces.resolveAgentModel(ctx, s.workspaces.store, sess.Account, nonEmpty(sess.Binding.Agent), nonEmpty(sess.Binding.Model))
	if err != nil {
		return nil, err
	}
	name, _, _ := strings.Cut(cleanText(prompt), "\n")
	name, _ = capRunes(authorName(name, "chat schedule"), maxScheduleName)
	in := ScheduleInput{Name: &name, ProjectID: &project, Agent: &agent, Model: &model, Prompt: &prompt, Cron: &cron}
	if zone != "" {
		in.TimeZone = &zone
	}
	return s.schedules.create(ctx, sess.Account, in, chatActor(sess))
}

// nonEmpty is a pointer to s, nil for "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
