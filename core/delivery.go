package core

import "time"

// DeliveryStatus is an outbox row's status (webhook deliveries, chat replies and
// notices): pending until acknowledged (delivered) or given up (failed).
type DeliveryStatus string

// Delivery statuses.
const (
	DeliveryPending   DeliveryStatus = "pending"
	DeliveryDelivered DeliveryStatus = "delivered"
	DeliveryFailed    DeliveryStatus = "failed"
)

// Delivery limits (api.md 6.4 and section 8).
const (
	MaxDeliveryAttempts = 20
	firstRetryAfter     = 30 * time.Second
	maxRetryAfter       = time.Hour
)

// PrefixDelivery marks delivery ids (operator-facing only; api.md names none).
const PrefixDelivery = "dlv_"

// Delivery is one event's journey to one endpoint.
type Delivery struct {
	ID             string
	AccountID      string
	WebhookID      string
	EventID        string
	Status         DeliveryStatus
	Attempts       int // failed or acknowledged attempts so far
	MaxAttempts    int
	NextAttemptAt  time.Time
	LastStatusCode int
	LastError      string
	LastAttemptAt  *time.Time
	DeliveredAt    *time.Time
	CreatedAt      time.Time
	// URL is the endpoint's address (read with the delivery for the operator view).
	URL string
}

// RetryDelay is the wait before delivery attempt n+1 after attempt n failed:
// min(30 s x 2^(n-1), 1 h), api.md's schedule.
func RetryDelay(n int) time.Duration { return webhookBackoff.Delay(max(n, 1), nil) }
