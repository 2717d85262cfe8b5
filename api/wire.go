package api

import (
	"time"

	"github.com/wshub/wshub/core"
)

// Wire shapes of api.md section 2. Timestamps are Unix epoch milliseconds. A
// workspace and a message are written by hand (jsonwrite.go); their shapes as structs
// are in jsonwrite_test.go, which holds the two encodings equal.

func ms(t time.Time) int64 { return t.UnixMilli() }

type assetJSON struct {
	AssetID      string `json:"assetId"`
	MimeType     string `json:"mimeType"`
	OriginalName string `json:"originalName"`
	SizeBytes    int64  `json:"sizeBytes"`
}

func toAsset(a *core.Asset) assetJSON {
	return assetJSON{AssetID: a.ID, MimeType: a.MimeType, OriginalName: a.OriginalName, SizeBytes: a.SizeBytes}
}

// authorJSON is who wrote a message or decided an approval (an extension): where they
// acted from, their id there, their name as it was then, and a forge person's profile
// page.
type authorJSON struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

func toAuthor(a *core.Author) *authorJSON {
	if a == nil {
		return nil
	}
	return &authorJSON{Kind: a.Kind, ID: a.ID, Name: a.Name, URL: a.URL}
}

type projectJSON struct {
	ProjectID     string `json:"projectId"`
	Repository    string `json:"repository"`
	DisplayName   string `json:"displayName"`
	DefaultBranch string `json:"defaultBranch"`
	State         string `json:"state"`
}

type providerJSON struct {
	ProviderID    string     `json:"providerId"`
	DisplayName   string     `json:"displayName"`
	Sizes         []sizeJSON `json:"sizes"`
	BillingSource string     `json:"billingSource"`
}

type sizeJSON struct {
	SizeID      string `json:"sizeId"`
	DisplayName string `json:"displayName"`
	VCPUCount   int    `json:"vcpuCount"`
	MemoryMiB   int64  `json:"memoryMib"`
}

type webhookJSON struct {
	WebhookID   string `json:"webhookId"`
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	CreatedAt   int64  `json:"createdAt"`
}

func toWebhook(w *core.Webhook) webhookJSON {
	return webhookJSON{WebhookID: w.ID, URL: w.URL, Description: w.Description, CreatedAt: ms(w.CreatedAt)}
}

// deliveryJSON is a delivery in the delivery log (an extension).
type deliveryJSON struct {
	DeliveryID  string `json:"deliveryId"`
	WebhookID   string `json:"webhookId"`
	EventID     string `json:"eventId"`
	EventType   string `json:"eventType"`
	WorkspaceID string `json:"workspaceId"`
	Status      string `json:"status"`
	// AttemptCount is the attempts made, all of them; Attempts lists the newest
	// core.LogAttemptsShown of those recorded (the rest, AttemptCount minus their
	// number, came before them).
	AttemptCount int `json:"attemptCount"`
	MaxAttempts  int `json:"maxAttempts"`
	// NextAttemptAt is set while the delivery is pending.
	NextAttemptAt *int64        `json:"nextAttemptAt,omitempty"`
	DeliveredAt   *int64        `json:"deliveredAt,omitempty"`
	CreatedAt     int64         `json:"createdAt"`
	Attempts      []attemptJSON `json:"attempts"`
}

type attemptJSON struct {
	Attempt    int   `json:"attempt"`
	StartedAt  int64 `json:"startedAt"`
	DurationMS int64 `json:"durationMs"`
	// StatusCode is null when no response arrived.
	StatusCode      *int   `json:"statusCode"`
	Error           string `json:"error,omitempty"`
	ResponseExcerpt string `json:"responseExcerpt"`
}

func toDelivery(d *core.Delivery) deliveryJSON {
	out := deliveryJSON{DeliveryID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, EventType: d.EventType,
		WorkspaceID: d.WorkspaceID, Status: string(d.Status), AttemptCount: d.Attempts, MaxAttempts: d.MaxAttempts,
		CreatedAt: ms(d.CreatedAt), Attempts: make([]attemptJSON, len(d.Log))}
	if d.Status == core.DeliveryPending {
		next := ms(d.NextAttemptAt)
		out.NextAttemptAt = &next
	}
	if d.DeliveredAt != nil {
		at := ms(*d.DeliveredAt)
		out.DeliveredAt = &at
	}
	for i, a := range d.Log {
		out.Attempts[i] = attemptJSON{Attempt: a.Attempt, StartedAt: ms(a.StartedAt), DurationMS: a.Duration.Milliseconds(),
			Error: a.Error, ResponseExcerpt: a.ResponseExcerpt}
		if a.StatusCode != 0 {
			code := a.StatusCode
			out.Attempts[i].StatusCode = &code
		}
	}
	return out
}

// pushed is the status object's pushed: true, false, or absent (nil) when no push was
// tried.
func pushed(lastPush string) *bool {
	if lastPush == "" {
		return nil
	}
	ok := lastPush == core.PushPushed
	return &ok
}

// The answers read most (a workspace, a message, a page of them) are written by hand
// (jsonwrite.go), faster than encoding/json; the types below are their shapes, and
// TestHandWrittenAnswersAreMarshal holds the hand-written bytes to json.Marshal of them.

type workspaceJSON struct {
	WorkspaceID string `json:"workspaceId"`
	ProviderID  string `json:"providerId"`
	ProjectID   string `json:"projectId"`
	Branch      string `json:"branch"`
	BaseRef     string `json:"baseRef"`
	State       string `json:"state"`
	StatusCode  string `json:"statusCode"`
	// StatusDetail is an extension of api.md's object: why, in words, when the workspace
	// failed (git's reason for a failed checkout). Absent otherwise.
	StatusDetail string `json:"statusDetail,omitempty"`
	// HeadCommit and Pushed are extensions too: the last commit a turn left on the
	// branch, and whether the last push reached the project's repository (absent when
	// the project does not push, or before the first commit).
	HeadCommit string `json:"headCommit,omitempty"`
	Pushed     *bool  `json:"pushed,omitempty"`
	// Origin and StartedBy (extensions) say where it was started from, and by whom.
	Origin string `json:"origin,omitempty"`
	// Title (an extension) is the first line of the first prompt; absent before one.
	Title     string      `json:"title,omitempty"`
	StartedBy *authorJSON `json:"startedBy,omitempty"`
	// Host (an extension) is the host whose hub runs a local workspace, its checkout
	// on that host's disk; absent for remote providers and before a hub took it on.
	Host string `json:"host,omitempty"`
	// PullRequest (an extension) is the pull request of the branch on the project's
	// forge; absent before one is opened or found.
	PullRequest  *core.PullRequestRef `json:"pullRequest,omitempty"`
	StartupPhase string               `json:"startupPhase"`
	RuntimeState string               `json:"runtimeState"`
	AgentStatus  string               `json:"agentStatus"`
	LatestSeq    int64                `json:"latestSeq"`
	LastTurn     *lastTurnJSON        `json:"lastTurn,omitempty"`
	CreatedAt    int64                `json:"createdAt"`
	UpdatedAt    int64                `json:"updatedAt"`
}

type lastTurnJSON struct {
	TurnID      string `json:"turnId"`
	Outcome     string `json:"outcome"`
	CompletedAt int64  `json:"completedAt"`
}

func toWorkspace(w *core.Workspace) workspaceJSON {
	out := workspaceJSON{
		WorkspaceID: w.ID, ProviderID: w.ProviderID, ProjectID: w.ProjectID, Branch: w.Branch, BaseRef: w.BaseRef,
		State: string(w.State), StatusCode: w.StatusCode, StatusDetail: w.StatusDetail, HeadCommit: w.HeadCommit, Pushed: pushed(w.LastPush), StartupPhase: w.StartupPhase, RuntimeState: w.RuntimeState,
		AgentStatus: w.AgentStatus(), LatestSeq: w.LatestSeq, CreatedAt: ms(w.CreatedAt), UpdatedAt: ms(w.UpdatedAt),
		Origin: w.Origin, Title: w.Title, StartedBy: toAuthor(w.StartedBy), Host: w.Host, PullRequest: w.Pull.Ref(),
	}
	if lt := w.LastTurnInfo(); lt != nil {
		out.LastTurn = &lastTurnJSON{TurnID: lt.TurnID, Outcome: string(lt.Outcome), CompletedAt: ms(lt.CompletedAt)}
	}
	return out
}

type messageJSON struct {
	MessageID   string      `json:"messageId"`
	Seq         int64       `json:"seq"`
	Role        string      `json:"role"`
	Text        string      `json:"text"`
	Status      string      `json:"status"`
	TurnID      string      `json:"turnId,omitempty"`
	Outcome     string      `json:"outcome,omitempty"`
	CreatedAt   int64       `json:"createdAt"`
	DeliveredAt *int64      `json:"deliveredAt,omitempty"`
	Attachments []assetJSON `json:"attachments,omitempty"`
	// Author (an extension) is who wrote a user message.
	Author *authorJSON `json:"author,omitempty"`
}

func toMessage(m *core.Message) messageJSON {
	out := messageJSON{MessageID: m.ID, Seq: m.Seq, Role: m.Role, Text: m.Text, Status: string(m.Status), TurnID: m.TurnID,
		Outcome: string(m.Outcome), CreatedAt: ms(m.CreatedAt), Author: toAuthor(m.Author)}
	if m.DeliveredAt != nil {
		d := ms(*m.DeliveredAt)
		out.DeliveredAt = &d
	}
	for _, a := range m.Assets {
		out.Attachments = append(out.Attachments, toAsset(a))
	}
	return out
}

type turnFailureJSON struct {
	TurnID  string `json:"turnId"`
	Agent   string `json:"agent"`
	Code    string `json:"code"`
	Message string `json:"message"`
}
