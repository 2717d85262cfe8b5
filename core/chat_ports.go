package core

import (
	"context"
	"time"
)

// ChatQueries are the store statements of the chat front-ends.
type ChatQueries interface {
	UpsertChatBinding(ctx context.Context, b *ChatBinding) error
	GetChatBinding(ctx context.Context, platform, teamID string) (*ChatBinding, error)
	SetChannelProject(ctx context.Context, place ChatPlace, projectID string, at time.Time) error
	ChannelProject(ctx context.Context, place ChatPlace) (string, error)
	// InsertChatThread records the thread of a new workspace; false when the thread
	// already has one (a race between two first messages).
	InsertChatThread(ctx context.Context, t *ChatThread) (bool, error)
	GetChatThread(ctx context.Context, place ChatPlace) (*ChatThread, error)
	SetThreadFollow(ctx context.Context, id int64, all bool) error
	CountPendingMessages(ctx context.Context, workspaceID string) (int, error)

	// InsertChatEvent stores a received event unless (platform, eventID) is known;
	// false for a duplicate (a platform retry).
	InsertChatEvent(ctx context.Context, e *ChatEvent) (bool, error)
	// ClaimChatEvents leases due events, at most one per thread and only the oldest
	// pending one of each, so a thread's messages are handled in order.
	ClaimChatEvents(ctx context.Context, token string, now, until time.Time, limit int) ([]*ChatEvent, error)
	SettleChatEvent(ctx context.Context, e *ChatEvent, token string) error

	// InsertChatDeliveries queues the reply for every thread of the workspace.
	InsertChatDeliveries(ctx context.Context, workspaceID, messageID string, seq int64, truncated bool, at time.Time) (int64, error)
	// ClaimChatDeliveries leases due replies, only the oldest pending one per thread.
	ClaimChatDeliveries(ctx context.Context, token string, now, until time.Time, limit int) ([]*ClaimedChatReply, error)
	SettleChatDelivery(ctx context.Context, r *ClaimedChatReply, token string) (bool, error)
}

// ChatEvent is a received platform event waiting to be handled (the inbox).
type ChatEvent struct {
	Platform  string
	EventID   string
	ThreadKey string // orders events of one thread (channel and thread ids)
	Payload   []byte // sealed in the store
	Status    string
	Attempts  int
	NextAt    time.Time
	LastError string
	At        time.Time
}

// ClaimedChatReply is a leased reply with where it goes and what it says (sealed).
type ClaimedChatReply struct {
	ThreadID      int64
	MessageID     string
	Place         ChatPlace
	WorkspaceID   string
	Truncated     bool
	Outcome       string
	SealedText    []byte
	FailureCode   string
	FailureAgent  string
	SealedFailure []byte
	PartsPosted   int
	Attempts      int
	// Settlement fields, set by core before SettleChatDelivery.
	Status    string
	NextAt    time.Time
	LastError string
}

// ChatReply is a finished turn to post in a thread.
type ChatReply struct {
	Place          ChatPlace
	WorkspaceID    string
	Text           string
	Outcome        string
	Truncated      bool
	FailureCode    string
	FailureMessage string
	Agent          string
	// PartsPosted parts went out on an earlier attempt; post the rest.
	PartsPosted int
}

// ChatPostResult is how posting a reply went.
type ChatPostResult struct {
	PartsPosted int           // total parts out, including earlier attempts'
	Done        bool          // every part is out
	RetryAfter  time.Duration // the platform asked to wait (429 Retry-After)
	Permanent   bool          // it can never succeed (channel gone, bot removed)
	Error       string
}

// ChatPoster posts replies on one platform (bots/slack, bots/discord).
type ChatPoster interface {
	PostReply(ctx context.Context, r ChatReply) ChatPostResult
}

// ChatReplyChannel and ChatEventChannel wake the chat workers.
const (
	ChatReplyChannel = "wshub_chat_replies"
	ChatEventChannel = "wshub_chat_events"
)
