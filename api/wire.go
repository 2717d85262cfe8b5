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
// acted from, their id there, and their name as it was then.
type authorJSON struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

func toAuthor(a *core.Author) *authorJSON {
	if a == nil {
		return nil
	}
	return &authorJSON{Kind: a.Kind, ID: a.ID, Name: a.Name}
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
