package core

import (
	"context"
	"time"
)

// Webhook is a registered endpoint. Its secret is kept sealed and never returned again.
type Webhook struct {
	ID           string
	AccountID    string
	URL          string
	Description  string
	SealedSecret []byte
	CreatedAt    time.Time
}

// WebhookQueries are the store statements of webhook endpoints.
type WebhookQueries interface {
	CountWebhooks(ctx context.Context, accountID string) (int, error)
	InsertWebhook(ctx context.Context, w *Webhook) error
	ListWebhooks(ctx context.Context, accountID string) ([]*Webhook, error)
	// GetWebhook reads one of the account's endpoints; ErrNoRows when it has none by id.
	GetWebhook(ctx context.Context, accountID, id string) (*Webhook, error)
	DeleteWebhook(ctx context.Context, accountID, id string) (bool, error)
}
