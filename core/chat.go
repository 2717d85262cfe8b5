package core

import (
	"slices"
	"time"
)

// Chat platforms.
const (
	PlatformSlack   = "slack"
	PlatformDiscord = "discord"
)

// ChatBinding lets a Slack team (or Discord guild) act for an account, with defaults
// for the workspaces its members start.
type ChatBinding struct {
	Platform  string
	TeamID    string
	AccountID string
	ProjectID string // "" = the channel's, or the account's only ready project
	Agent     string // "" with Model "" = from the account's newest workspace
	Model     string
	// Roles (Discord): only members holding one of them may start or talk; Channels:
	// only in these channels and their threads. Empty: no limit.
	Roles    []string
	Channels []string
	// RuntimeMode is the mode of the workspaces its members start ("" = the default).
	RuntimeMode string
	// ProviderID is the provider they start on ("" = the account's, else the hub's).
	ProviderID string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Permits checks the binding's limits for a member holding roles, writing in the
// session's channel (a thread's parent).
func (s *ChatSession) Permits(roles []string) error {
	b := s.Binding
	if len(b.Channels) > 0 && !slices.Contains(b.Channels, s.Place.ChannelID) {
		return Errorf(CodeChatNotAllowed, "workspaces are not started or driven in this channel")
	}
	if len(b.Roles) > 0 && !slices.ContainsFunc(roles, func(r string) bool { return slices.Contains(b.Roles, r) }) {
		return Errorf(CodeChatNotAllowed, "only members with one of the bound roles may start or talk to workspaces")
	}
	return nil
}

// ChatPlace is where a chat message was written: team, channel and thread (the
// thread's root message id; a message that starts a thread is its own root).
type ChatPlace struct {
	Platform  string
	TeamID    string
	ChannelID string
	ThreadID  string
}

// ChatThread is a thread that drives a workspace.
type ChatThread struct {
	ID          int64
	Place       ChatPlace
	WorkspaceID string
	// FollowAll makes every reply in the thread a message, not only mentions.
	FollowAll bool
	CreatedAt time.Time
}

// ChatSession is who is asking, from where: the binding, its account, the thread's
// workspace when the thread has one, and the channel's default project.
type ChatSession struct {
	Place          ChatPlace
	Binding        *ChatBinding
	Account        *Account
	Thread         *ChatThread // nil: no workspace in this thread yet
	ChannelProject string
}

// ChatFile is a file attached to a chat message, already downloaded.
type ChatFile struct {
	ID       string // the platform's file id (part of the upload's idempotency key)
	Name     string
	MimeType string
	Data     []byte
}

// ChatInput is one chat message for a workspace. Key is derived from the platform's
// ids for the message (team, channel, message ts), so redelivered events map to the
// same workspace, uploads and message.
type ChatInput struct {
	Key   string
	Text  string
	Files []ChatFile
	// UserID and UserName are who wrote it on the platform (the name as shown there),
	// UserURL their profile page where the platform has one (a forge's).
	UserID, UserName, UserURL string
	// Project (a name or id), Agent and Model choose for a new workspace instead of the
	// channel's and binding's defaults (Discord's /workspace options); empty: defaults.
	Project, Agent, Model string
}

// ChatStatus answers `status` in a thread.
type ChatStatus struct {
	Workspace *Workspace
	Project   *Project
	Queued    int // user messages waiting for their turn (pending)
}

// Chat is the chat front-ends' use cases: sessions bound to threads, the inbox of
// platform events and the outboxes of replies and notices. Starting workspaces and
// sending messages go through Workspaces, as the API's do.
type Chat struct {
	outbox
	store      chatStore
	workspaces *Workspaces
	schedules  *Schedules
}

// ChatQueues are the chat inbox and outboxes the background jobs work through: events
// in, and replies, notices and turn statuses out.
type ChatQueues struct {
	outbox
	logger
	store      chatStore
	workspaces *Workspaces
}

// chatStore is what Chat reads and writes.
type chatStore interface {
	TxStore
	AccountQueries
	ProjectQueries
	ChatQueries
	ChatStatusQueries
}
