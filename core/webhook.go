package core

import "time"

// Webhook is a registered endpoint. Its secret is kept sealed and never returned again.
type Webhook struct {
	ID           string
	AccountID    string
	URL          string
	Description  string
	SealedSecret []byte
	CreatedAt    time.Time
}
