package core

import (
	"context"
	"encoding/json"
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
	// GetChatThreadByThread finds a thread by its own id (a Discord thread is a channel
	// whose messages do not name its parent).
	GetChatThreadByThread(ctx context.Context, platform, teamID, threadID string) (*ChatThread, error)
	SetThreadFollow(ctx context.Context, id int64, all bool) error
	// ChatThreadsOf lists the threads of a workspace.
	ChatThreadsOf(ctx context.Context, workspaceID string) ([]*ChatThread, error)
	CountPendingMessages(ctx context.Context, workspaceID string) (int, error)

	// InsertChatEvent stores a received event unless (platform, eventID) is known;
	// false for a duplicate (a platform retry).
	InsertChatEvent(ctx context.Context, e *ChatEvent) (bool, error)
	// ClaimChatEvents leases due events, at most one per thread and only the oldest
	// pending one of each, so a thread's messages are handled in order.
	//
	// The Claim statements of the inbox and outboxes give each row claimed its own
	// lease token (token, the claim's, joined with the row's key), returned in Lease;
	// due times are the hub's clock (now), but a lease runs leaseFor by the database's
	// clock, which alone judges it.
	ClaimChatEvents(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) ([]*ChatEvent, error)
	// SettleChatEvent is fenced by the lease token; false when the lease was lost.
	SettleChatEvent(ctx context.Context, e *ChatEvent, token string) (bool, error)

	// InsertChatDeliveries queues the reply for every thread of the workspace.
	InsertChatDeliveries(ctx context.Context, workspaceID, messageID string, seq int64, truncated bool, at time.Time) (int64, error)
	// ClaimChatDeliveries leases due replies, only the oldest pending one per thread.
	ClaimChatDeliveries(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) ([]*ClaimedChatReply, error)
	SettleChatDelivery(ctx context.Context, r *ClaimedChatReply, token string) (bool, error)

	// InsertChatNotices queues notices; a (platform, key) already queued is skipped.
	InsertChatNotices(ctx context.Context, ns []*QueuedChatNotice) (int64, error)
	// InsertFailureNotices queues a workspace_failed notice for every thread of the
	// workspace.
	InsertFailureNotices(ctx context.Context, workspaceID, code string, at time.Time) (int64, error)
	// ClaimChatNotices leases due notices, only the oldest pending one per thread, and
	// a failure notice only once its thread has no pending reply.
	ClaimChatNotices(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) ([]*ClaimedChatNotice, error)
	SettleChatNotice(ctx context.Context, n *ClaimedChatNotice, token string) (bool, error)
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
	// Lease is the token of the claim handling it: settling is fenced by it.
	Lease string
}

// ClaimedChatReply is a leased reply with where it goes and what it says (sealed).
type ClaimedChatReply struct {
	ThreadID      int64
	MessageID     string
	TurnID        string
	Place         ChatPlace
	WorkspaceID   string
	Truncated     bool
	Outcome       Outcome
	SealedText    []byte
	FailureCode   string
	FailureAgent  string
	SealedFailure []byte
	ChatPostState
}

// ChatPostState is the outbox bookkeeping of a reply or notice: the store reads
// PartsPosted and Attempts; core sets the rest from the post's result before settling.
type ChatPostState struct {
	PartsPosted int
	Attempts    int
	CreatedAt   time.Time // when the turn finished or the notice was queued
	Status      DeliveryStatus
	NextAt      time.Time
	LastError   string
	// Lease is the token of the claim posting it: settling is fenced by it.
	Lease string
}

// ChatReply is a finished turn to post in a thread.
type ChatReply struct {
	Place       ChatPlace
	WorkspaceID string
	// TurnID is the turn it answers.
	TurnID         string
	Text           string
	Outcome        Outcome
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
	// Ref is the platform's id of the message posted, for a notice edited later (an
	// approval's, when it is decided).
	Ref string
}

// ChatPoster posts replies and notices on one platform (bots/slack, bots/discord).
type ChatPoster interface {
	PostReply(ctx context.Context, r ChatReply) ChatPostResult
	PostNotice(ctx context.Context, n ChatNotice) ChatPostResult
}

// ChatReplyChannel and ChatEventChannel wake the chat workers.
const (
	ChatReplyChannel = "wshub_chat_replies"
	ChatEventChannel = "wshub_chat_events"
)

// Notice kinds.
const (
	NoticeText            = "text"             // words the bot chose (a command's answer, a refusal)
	NoticeWorkspaceFailed = "workspace_failed" // the thread's workspace failed; the bot words it
)

// ChatNotice is something the hub says in a thread that is not an agent's reply. A bot
// returns NoticeText notices from handling an event; core queues NoticeWorkspaceFailed
// when a thread's workspace fails.
type ChatNotice struct {
	Place       ChatPlace
	Kind        string
	Text        string // NoticeText: the words, in the platform's markup
	WorkspaceID string // NoticeWorkspaceFailed: which workspace, and its statusCode
	Code        string
	// NoticeApproval: the approval to decide, and what the agent asks to do: the
	// tool's whole input (nil when the agent gave none) and its hash.
	ApprovalID, Tool, Summary string
	Input                     json.RawMessage
	InputSHA256               string
	// NoticeApprovalDecided: the approval's message to edit (MessageRef, "" when it
	// was never posted), and how it was decided.
	MessageRef string
	Status     ApprovalStatus
	DecidedBy  string
	// DeciderName is the name of the person who decided, as it was then.
	DeciderName string
	// NoticePullRequestOffer: the branch pushed (WorkspaceID is its workspace).
	Branch string
	// PartsPosted parts went out on an earlier attempt; post the rest.
	PartsPosted int
}

// QueuedChatNotice is a notice to write to the outbox, its text sealed.
type QueuedChatNotice struct {
	Place      ChatPlace
	Key        string
	Kind       string
	SealedText []byte
	At         time.Time
	// RefersTo is the key of the notice whose message this one edits.
	RefersTo string
	// AfterReplies is the chat thread (ChatThread.ID) whose pending replies the notice
	// waits for, so that it is said after them (0: it waits for none).
	AfterReplies int64
}

// ClaimedChatNotice is a leased notice.
type ClaimedChatNotice struct {
	ID          int64
	Key         string
	Place       ChatPlace
	Kind        string
	SealedText  []byte
	WorkspaceID string
	Code        string
	// RefersTo, RefersRef and RefersSealed are the notice this one edits: its key, its
	// message's ref once posted, its sealed text.
	RefersTo, RefersRef string
	RefersSealed        []byte
	// MessageRef is set by core from the post: the message's ref, kept for edits.
	MessageRef string
	ChatPostState
}

// ChatPostReport is how one claimed reply or notice went, for metrics.
type ChatPostReport struct {
	Platform string
	Kind     string         // "reply" or "notice"
	Status   DeliveryStatus // DeliveryDelivered, DeliveryPending (retrying), DeliveryFailed (given up)
	// Released: the hub stopped mid-post; not a try, nothing to count.
	Released bool
	// Since is, once delivered, how long after CreatedAt the last part went out.
	Since time.Duration
}

// ChatEventReport is how handling one inbox event went, for metrics.
type ChatEventReport struct {
	Platform string
	Status   string // "done", "pending" (to be retried) or "failed"
	Released bool
}
