package core

import (
	"context"
	"strings"
	"time"
)

// Message roles (api.md 2.3).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// MessageStatus is a message's status (api.md 3.2).
type MessageStatus string

// Message statuses.
const (
	MessagePending   MessageStatus = "pending"
	MessageDelivered MessageStatus = "delivered"
	MessageSettled   MessageStatus = "settled"
	MessageFailed    MessageStatus = "failed"
	MessageExpired   MessageStatus = "expired"
)

// Outcome is how a turn ended (api.md 2.2).
type Outcome string

// Turn outcomes.
const (
	OutcomeCompleted   Outcome = "completed"
	OutcomeInterrupted Outcome = "interrupted"
	OutcomeError       Outcome = "error"
)

// Turn failure codes (api.md 2.5).
const (
	FailureAgentNotInstalled = "agent_not_installed"
	FailureAgentError        = "agent_error"
)

// Limits of api.md section 8.
const (
	MaxTextChars           = 65536
	MaxAttachments         = 8
	MaxAssetBytes          = 20 << 20
	MaxFileNameChars       = 255
	MaxMessagesPage        = 200
	MaxWebhooks            = 20
	MaxWebhookURLChars     = 2048
	MaxWebhookDescChars    = 200
	MaxIdempotencyKeyChars = 200
	MaxReplyChars          = 16384
	MaxFailureMessageChars = 1200
	MaxModelChars          = 200
	MessageExpiry          = 24 * time.Hour
)

// Message is one entry of a workspace conversation. Text is plaintext in core; the
// store keeps it sealed.
type Message struct {
	ID          string
	WorkspaceID string
	Seq         int64
	Role        string
	Text        string
	Status      MessageStatus
	TurnID      string
	Outcome     Outcome
	CreatedAt   time.Time
	DeliveredAt *time.Time
	// AssetIDs are the attachments of a user message, in the order sent.
	AssetIDs []string
	// Assets are filled by ListMessages from AssetIDs.
	Assets []*Asset
	// Failure is set on an assistant message whose turn ended in error.
	Failure *TurnFailure
	// Author is who wrote a user message (nil: an assistant message, or one sent
	// before authors were recorded).
	Author *Author
}

// TurnFailure explains a turn that ended in error (api.md 2.5).
type TurnFailure struct {
	TurnID  string
	Agent   string
	Code    string
	Message string
}

// SendReceipt is the answer to send message (api.md 4.4).
type SendReceipt struct {
	MessageID       string
	Seq             int64
	Status          string // queued | delivered
	ResumeTriggered bool
}

// MessagePage is one page of List messages.
type MessagePage struct {
	Messages    []*Message
	LatestSeq   int64
	TurnFailure *TurnFailure
}

// cleanText is a prompt or message text as the hub keeps it: NUL characters removed
// (no agent can receive them: a command line cannot hold one, and agents read text),
// then surrounding white space. A text of only NULs and white space is empty.
func cleanText(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\x00", ""))
}

// MessageQueries are the store statements of a workspace's conversation.
type MessageQueries interface {
	// InsertMessage gives m the workspace's next seq (as NextSeq) and inserts it. With
	// maxOpen > 0 it inserts nothing and answers false when the workspace already holds
	// maxOpen open user messages (pending or delivered).
	InsertMessage(ctx context.Context, m *Message, sealedText []byte, maxOpen int) (bool, error)
	GetMessage(ctx context.Context, workspaceID, id string) (*StoredMessage, error)
	// RequestStop marks a user message's turn to be stopped (the first request's time
	// is kept).
	RequestStop(ctx context.Context, messageID string, at time.Time) error
	ListMessages(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*StoredMessage, error)
}
