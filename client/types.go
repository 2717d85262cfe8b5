package client

import "time"

// Millis is a wire timestamp: Unix epoch milliseconds.
type Millis int64

// Time converts it.
func (m Millis) Time() time.Time { return time.UnixMilli(int64(m)) }

// Workspace is the workspace status object (api.md 2.1).
type Workspace struct {
	WorkspaceID  string    `json:"workspaceId"`
	ProviderID   string    `json:"providerId"`
	ProjectID    string    `json:"projectId"`
	Branch       string    `json:"branch"`
	BaseRef      string    `json:"baseRef"`
	State        string    `json:"state"`
	StatusCode   string    `json:"statusCode"`
	StartupPhase string    `json:"startupPhase"`
	RuntimeState string    `json:"runtimeState"`
	AgentStatus  string    `json:"agentStatus"`
	LatestSeq    int64     `json:"latestSeq"`
	LastTurn     *LastTurn `json:"lastTurn,omitempty"`
	CreatedAt    Millis    `json:"createdAt"`
	UpdatedAt    Millis    `json:"updatedAt"`
	// wshub's extensions: why a failed workspace failed, the last commit a turn left
	// on the branch, and whether the last push reached the repository (nil: no push).
	StatusDetail string `json:"statusDetail,omitempty"`
	HeadCommit   string `json:"headCommit,omitempty"`
	Pushed       *bool  `json:"pushed,omitempty"`
	// Origin and StartedBy (extensions): where it was started from (api, slack,
	// discord, app) and by whom.
	Origin    string  `json:"origin,omitempty"`
	StartedBy *Author `json:"startedBy,omitempty"`
	// Title (an extension): the first line of its first prompt ("" before one).
	Title string `json:"title,omitempty"`
	// Host (an extension): the host whose hub runs a local workspace, its checkout on
	// that host's disk ("" for remote providers, and before a hub took it on).
	Host string `json:"host,omitempty"`
	// PullRequest (an extension): the branch's pull request on the project's forge
	// (nil: none opened or found yet).
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
}

// PullRequest is a pull (merge) request on the project's forge, as the hub last saw it.
type PullRequest struct {
	URL    string `json:"url"`
	Number int64  `json:"number"`
	State  string `json:"state"` // open, merged or closed
}

// LastTurn is the most recent finished turn (api.md 2.2).
type LastTurn struct {
	TurnID      string `json:"turnId"`
	Outcome     string `json:"outcome"`
	CompletedAt Millis `json:"completedAt"`
}

// Message is one entry of a conversation (api.md 2.3).
type Message struct {
	MessageID   string  `json:"messageId"`
	Seq         int64   `json:"seq"`
	Role        string  `json:"role"` // user or assistant
	Text        string  `json:"text"`
	Status      string  `json:"status"` // pending, delivered, settled, failed, expired
	TurnID      string  `json:"turnId,omitempty"`
	Outcome     string  `json:"outcome,omitempty"` // completed, interrupted, error (assistant messages)
	CreatedAt   Millis  `json:"createdAt"`
	DeliveredAt *Millis `json:"deliveredAt,omitempty"`
	Attachments []Asset `json:"attachments,omitempty"`
	// Author is who wrote a user message (an extension; nil on agent replies).
	Author *Author `json:"author,omitempty"`
}

// Author is a person who acted, and from where (an extension): Kind is api (ID and
// Name are the API key's), slack or discord (the chat user's id and display name), or
// app (a member of the account). Name is as it was when they acted.
type Author struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Asset is an uploaded file (api.md 2.4).
type Asset struct {
	AssetID      string `json:"assetId"`
	MimeType     string `json:"mimeType"`
	OriginalName string `json:"originalName"`
	SizeBytes    int64  `json:"sizeBytes"`
}

// TurnFailure says why a turn ended in error (api.md 2.5).
type TurnFailure struct {
	TurnID  string `json:"turnId"`
	Agent   string `json:"agent"`
	Code    string `json:"code"` // agent_not_installed or agent_error
	Message string `json:"message"`
}

// MessagePage is one page of a conversation (api.md 4.5).
type MessagePage struct {
	Messages    []Message    `json:"messages"`
	LatestSeq   int64        `json:"latestSeq"`
	TurnFailure *TurnFailure `json:"turnFailure,omitempty"`
}

// Project is a connected repository (api.md 2.6).
type Project struct {
	ProjectID     string `json:"projectId"`
	Repository    string `json:"repository"`
	DisplayName   string `json:"displayName"`
	DefaultBranch string `json:"defaultBranch"`
	State         string `json:"state"`
}

// Provider is a machine provider (api.md 2.7).
type Provider struct {
	ProviderID    string `json:"providerId"`
	DisplayName   string `json:"displayName"`
	Sizes         []Size `json:"sizes"`
	BillingSource string `json:"billingSource"`
}

// Size is a machine size of a provider.
type Size struct {
	SizeID      string  `json:"sizeId"`
	DisplayName string  `json:"displayName"`
	VCPUCount   float64 `json:"vcpuCount"`
	MemoryMiB   float64 `json:"memoryMib"`
}

// Webhook is a registered endpoint (api.md 2.8).
type Webhook struct {
	WebhookID   string `json:"webhookId"`
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	CreatedAt   Millis `json:"createdAt"`
}

// DeliveryPage is a page of an endpoint's delivery log, newest first (an extension).
type DeliveryPage struct {
	Deliveries []Delivery `json:"deliveries"`
	// NextBefore, passed to ListDeliveries, reads the next (older) page; empty on the last.
	NextBefore string `json:"nextBefore,omitempty"`
}

// Delivery is one event's delivery to one endpoint, with its attempts (an extension).
type Delivery struct {
	DeliveryID  string `json:"deliveryId"`
	WebhookID   string `json:"webhookId"`
	EventID     string `json:"eventId"`
	EventType   string `json:"eventType"`
	WorkspaceID string `json:"workspaceId"`
	Status      string `json:"status"` // pending, delivered or failed
	// AttemptCount is the attempts made, all of them; Attempts holds the newest 20.
	AttemptCount int `json:"attemptCount"`
	MaxAttempts  int `json:"maxAttempts"`
	// NextAttemptAt is set while the delivery is pending.
	NextAttemptAt *Millis `json:"nextAttemptAt,omitempty"`
	DeliveredAt   *Millis `json:"deliveredAt,omitempty"`
	CreatedAt     Millis  `json:"createdAt"`
	// Attempts are the newest 20 recorded, oldest first.
	Attempts []DeliveryAttempt `json:"attempts"`
}

// EarlierAttempts is how many attempts came before those Attempts holds and are not
// listed: past the log's 20 for a delivery redelivered often, or made before the hub
// kept the log.
func (d Delivery) EarlierAttempts() int { return max(d.AttemptCount-len(d.Attempts), 0) }

// DeliveryAttempt is one recorded attempt of a delivery.
type DeliveryAttempt struct {
	Attempt    int    `json:"attempt"`
	StartedAt  Millis `json:"startedAt"`
	DurationMS int64  `json:"durationMs"`
	// StatusCode is nil when no response arrived.
	StatusCode *int   `json:"statusCode"`
	Error      string `json:"error,omitempty"`
	// ResponseExcerpt is the first 1 KiB of the receiver's answer.
	ResponseExcerpt string `json:"responseExcerpt"`
}

// SendReceipt is the answer to a sent message (api.md 4.4).
type SendReceipt struct {
	MessageID       string `json:"messageId"`
	Seq             int64  `json:"seq"`
	Status          string `json:"status"` // queued or delivered
	ResumeTriggered bool   `json:"resumeTriggered"`
}

// CreateWorkspaceRequest is the body of Create workspace (api.md 4.1); empty fields
// take the hub's defaults.
type CreateWorkspaceRequest struct {
	Prompt      string `json:"prompt,omitempty"`
	ProjectID   string `json:"projectId,omitempty"`
	ProviderID  string `json:"providerId,omitempty"`
	Agent       string `json:"agent,omitempty"`
	Model       string `json:"model,omitempty"`
	RuntimeMode string `json:"runtimeMode,omitempty"`
	BaseRef     string `json:"baseRef,omitempty"`
	Branch      string `json:"branch,omitempty"`
	// IdempotencyKey makes a retried create return the first one's workspace; one is
	// generated when empty.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// SendMessageRequest is the body of Send message (api.md 4.4).
type SendMessageRequest struct {
	Text        string   `json:"text"`
	Attachments []string `json:"attachments,omitempty"`
	// IdempotencyKey: see CreateWorkspaceRequest.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// Upload is a file for Upload attachment (api.md 4.6).
type Upload struct {
	Name        string // X-Service-File-Name (default "attachment")
	ContentType string // one of api.md's media types
	Data        []byte
	// IdempotencyKey: see CreateWorkspaceRequest.
	IdempotencyKey string
}
