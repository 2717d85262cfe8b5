package core

import (
	"context"
	"strings"
	"time"
)

// The usage page: what the account's people, projects and agents did lately, read
// from what the hub keeps anyway (workspaces, and the turns their messages record),
// so it needs no counter of its own that could drift from them.

// UsageWindow is how far back the usage page looks.
const UsageWindow = 30 * 24 * time.Hour

// UsageRow is one member's, project's or agent's use over the window.
type UsageRow struct {
	// Key is what the row groups by: a member id (or, for someone the hub knows by no
	// member, their author kind and id, "api:key_..."), a project id or an agent id.
	Key string
	// Name is the key for people: a member's display name, a project's name, an
	// agent's name from the catalog.
	Name string
	// Workspaces were started in the window; Turns ended in it, Failures of them in
	// error, and AgentTime is the sum of their durations (from the agent taking the
	// message to its reply).
	Workspaces int64
	Turns      int64
	Failures   int64
	AgentTime  time.Duration
}

// Usage is the usage page: a table per dimension, busiest first (most turns, then
// most agent time, then most workspaces).
type Usage struct {
	Since, Until time.Time
	Members      []*UsageRow
	Projects     []*UsageRow
	Agents       []*UsageRow
}

// Empty reports that nothing happened in the window.
func (u *Usage) Empty() bool {
	return len(u.Members) == 0 && len(u.Projects) == 0 && len(u.Agents) == 0
}

// UsageQueries are the usage page's statements, one per table, each scoped to an
// account and to what happened at or after since. A row's Name is the member's name
// (else the name recorded as they acted), the project's name, or "" for an agent.
type UsageQueries interface {
	UsageByMember(ctx context.Context, accountID string, since time.Time) ([]*UsageRow, error)
	UsageByProject(ctx context.Context, accountID string, since time.Time) ([]*UsageRow, error)
	UsageByAgent(ctx context.Context, accountID string, since time.Time) ([]*UsageRow, error)
}

// Usage reads the account's use over the last UsageWindow (owners).
func (s *App) Usage(ctx context.Context, a *AppSession) (*Usage, error) {
	if err := a.requireOwner(); err != nil {
		return nil, err
	}
	now := s.clock.Now()
	u := &Usage{Since: now.Add(-UsageWindow), Until: now}
	var err error
	if u.Members, err = s.store.UsageByMember(ctx, a.AccountID, u.Since); err != nil {
		return nil, err
	}
	for _, r := range u.Members {
		r.Name = usagePersonName(r)
	}
	if u.Projects, err = s.store.UsageByProject(ctx, a.AccountID, u.Since); err != nil {
		return nil, err
	}
	if u.Agents, err = s.store.UsageByAgent(ctx, a.AccountID, u.Since); err != nil {
		return nil, err
	}
	for _, r := range u.Agents {
		r.Name = AgentLabel(r.Key)
	}
	return u, nil
}

// usagePersonName names a row of the people's table: a member by their name, and
// someone the hub knows by no member by the name they acted under and where from,
// so an API key's work is not mistaken for a person's.
func usagePersonName(r *UsageRow) string {
	kind, _, notMember := strings.Cut(r.Key, ":")
	name := r.Name
	if name == "" {
		name = r.Key
	}
	if !notMember {
		return name
	}
	switch kind {
	case AuthorAPI:
		return name + " (API key)"
	case AuthorSlack:
		return name + " (Slack)"
	case AuthorDiscord:
		return name + " (Discord)"
	case "":
		return "No one named (the hub)"
	}
	return name + " (" + kind + ")"
}
