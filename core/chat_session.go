package core

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// BindChat binds a team to an account (operator command), with optional defaults.
func (s *Admin) BindChat(ctx context.Context, b *ChatBinding) error {
	if b.Platform != PlatformSlack && b.Platform != PlatformDiscord {
		return Errorf(CodeInvalidRequest, "platform must be slack or discord")
	}
	if strings.TrimSpace(b.TeamID) == "" {
		return Errorf(CodeInvalidRequest, "the team id is required")
	}
	if _, err := s.store.GetAccount(ctx, b.AccountID); err != nil {
		return notFound(err, CodeNotFound, "no such account")
	}
	if b.ProjectID != "" {
		p, err := s.store.GetProject(ctx, b.AccountID, b.ProjectID)
		if err == nil && p.RemovedAt != nil {
			err = ErrNoRows
		}
		if err != nil {
			return notFound(err, CodeProjectNotFound, "no such project on this account")
		}
	}
	if b.ProviderID != "" && !s.workspaces.hasProvider(ctx, b.ProviderID) {
		return Errorf(CodeInvalidRequest, "provider %q is not one of this hub's (WSHUB_PROVIDERS)", b.ProviderID)
	}
	if len(b.Roles) > 0 && b.Platform != PlatformDiscord {
		return Errorf(CodeInvalidRequest, "roles limit Discord guilds only")
	}
	for _, list := range [][]string{b.Roles, b.Channels} {
		for _, id := range list {
			if strings.TrimSpace(id) == "" || strings.ContainsAny(id, ", \t\n") {
				return Errorf(CodeInvalidRequest, "role and channel ids are comma-separated, without spaces")
			}
		}
	}
	if (b.Agent == "") != (b.Model == "") {
		return Errorf(CodeInvalidRequest, "give both --agent and --model, or neither")
	}
	if b.Agent != "" && !slices.Contains(AgentIDs, b.Agent) {
		return Errorf(CodeInvalidRequest, "agent must be one of agent_1, agent_2, agent_3, agent_4")
	}
	if chars(b.Model) > MaxModelChars {
		return Errorf(CodeInvalidRequest, "model must be at most 200 characters")
	}
	if b.RuntimeMode != "" && !slices.Contains(RuntimeModes, b.RuntimeMode) {
		return Errorf(CodeInvalidRequest, "runtime mode must be one of %s", strings.Join(RuntimeModes, ", "))
	}
	now := s.clock.Now()
	b.CreatedAt, b.UpdatedAt = now, now
	return s.store.UpsertChatBinding(ctx, b)
}

// ChatSessionFor resolves who acts for a chat message: the team's binding and account
// (entitled), the thread's workspace if any, and the channel's default project.
func (s *Chat) ChatSessionFor(ctx context.Context, place ChatPlace) (*ChatSession, error) {
	b, err := s.store.GetChatBinding(ctx, place.Platform, place.TeamID)
	if err != nil {
		return nil, notFound(err, CodeChatNotBound, "this team is not bound to a hub account")
	}
	acct, err := s.store.GetAccount(ctx, b.AccountID)
	if err != nil {
		return nil, notFound(err, CodeChatNotBound, "the bound account no longer exists")
	}
	sess := &ChatSession{Place: place, Binding: b, Account: acct}
	if err := acct.checkEntitled(); err != nil {
		return sess, err
	}
	if sess.Thread, err = s.store.GetChatThread(ctx, place); err != nil && !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	if sess.ChannelProject, err = s.store.ChannelProject(ctx, place); err != nil && !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	return sess, nil
}

// ChatSessionForThread resolves the session of a message in a thread the hub knows
// by the thread's id alone (a Discord thread is a channel; its messages do not name
// the parent: the place's ChannelID is not read). CodeChatNoWorkspace when the thread
// has no workspace.
func (s *Chat) ChatSessionForThread(ctx context.Context, place ChatPlace) (*ChatSession, error) {
	t, err := s.store.GetChatThreadByThread(ctx, place.Platform, place.TeamID, place.ThreadID)
	if err != nil {
		return nil, notFound(err, CodeChatNoWorkspace, "this thread has no workspace")
	}
	return s.ChatSessionFor(ctx, t.Place)
}

// KnownChatThread reports whether the thread has a workspace: a front-end that
// receives every message stores only those its threads need. As for
// ChatSessionForThread, the place's ChannelID is not read.
func (s *Chat) KnownChatThread(ctx context.Context, place ChatPlace) (bool, error) {
	_, err := s.store.GetChatThreadByThread(ctx, place.Platform, place.TeamID, place.ThreadID)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// UseProject sets the channel's default project, named by id or display name.
func (s *Chat) UseProject(ctx context.Context, sess *ChatSession, name string) (*Project, error) {
	match, err := s.findProject(ctx, sess.Account.ID, name)
	if err != nil {
		return nil, err
	}
	if err := s.store.SetChannelProject(ctx, sess.Place, match.ID, s.clock.Now()); err != nil {
		return nil, err
	}
	sess.ChannelProject = match.ID
	return match, nil
}

// findProject finds an account's project by id or display name (chat commands).
func (s *Chat) findProject(ctx context.Context, accountID, name string) (*Project, error) {
	name = strings.TrimSpace(name)
	projects, err := s.store.ListProjects(ctx, accountID)
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		if p.ID == name || strings.EqualFold(p.DisplayName, name) {
			return p, nil
		}
	}
	return nil, Errorf(CodeChatProjectUnknown, "no project %q on this account", name)
}

// SetFollow switches the thread between "every reply is a message" and "mentions only".
func (s *Chat) SetFollow(ctx context.Context, sess *ChatSession, all bool) error {
	if sess.Thread == nil {
		return Errorf(CodeChatNoWorkspace, "this thread has no workspace")
	}
	if err := s.store.SetThreadFollow(ctx, sess.Thread.ID, all); err != nil {
		return err
	}
	sess.Thread.FollowAll = all
	return nil
}

// ThreadStatus is the thread's workspace with its project and queued messages.
func (s *Chat) ThreadStatus(ctx context.Context, sess *ChatSession) (*ChatStatus, error) {
	if sess.Thread == nil {
		return nil, Errorf(CodeChatNoWorkspace, "this thread has no workspace")
	}
	ws, err := s.workspaces.GetWorkspace(ctx, sess.Account, sess.Thread.WorkspaceID)
	if err != nil {
		return nil, err
	}
	p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
	if err != nil {
		return nil, err
	}
	n, err := s.store.CountPendingMessages(ctx, ws.ID)
	if err != nil {
		return nil, err
	}
	return &ChatStatus{Workspace: ws, Project: p, Queued: n}, nil
}

// ThreadPullRequest is the `pr` command: the Open pull request action on the thread's
// workspace.
func (s *Chat) ThreadPullRequest(ctx context.Context, sess *ChatSession) (*Workspace, error) {
	if sess.Thread == nil {
		return nil, Errorf(CodeChatNoWorkspace, "this thread has no workspace")
	}
	return s.workspaces.OpenPullRequest(ctx, sess.Account, sess.Thread.WorkspaceID)
}

// ArchiveThread archives the thread's workspace.
func (s *Chat) ArchiveThread(ctx context.Context, sess *ChatSession) (*Workspace, error) {
	if sess.Thread == nil {
		return nil, Errorf(CodeChatNoWorkspace, "this thread has no workspace")
	}
	if _, err := s.workspaces.GetWorkspace(ctx, sess.Account, sess.Thread.WorkspaceID); err != nil {
		return nil, err
	}
	return archiveWorkspace(ctx, s.store, s.clock, sess.Thread.WorkspaceID)
}
