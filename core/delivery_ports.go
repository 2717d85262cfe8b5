package core

import (
	"context"
	"time"
)

// DeliveryQueries are the store statements of the webhook outbox. Statements taking a
// lease token act only while that lease is held (fencing): a worker that lost its
// claim, or whose endpoint was deleted meanwhile, changes nothing.
type DeliveryQueries interface {
	// WebhookIDs lists the account's endpoints (those committed now).
	WebhookIDs(ctx context.Context, accountID string) ([]string, error)
	InsertEvent(ctx context.Context, e *Event) error
	InsertDeliveries(ctx context.Context, ds []*Delivery) error
	// ClaimDueDeliveries leases up to limit pending deliveries due at now whose lease
	// is free or expired (FOR UPDATE SKIP LOCKED), with what sending them needs. Each
	// row gets its own lease token (token, the claim's, joined with the row's id, in
	// Lease); the lease runs leaseFor by the database's clock, which alone judges it.
	ClaimDueDeliveries(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) ([]*ClaimedDelivery, error)
	// SettleDelivery records a finished attempt and frees the lease; false when the
	// lease was lost or the delivery is gone.
	SettleDelivery(ctx context.Context, id, token string, st DeliverySettlement) (bool, error)
	// ReleaseDelivery frees the lease without counting an attempt (hub stopping).
	ReleaseDelivery(ctx context.Context, id, token string) error
	// ListDeliveries is the operator view: an account's deliveries, newest first,
	// optionally of one status.
	ListDeliveries(ctx context.Context, accountID, status string, limit int) ([]*Delivery, error)
	// RedeliverDelivery makes a delivery due at now with room for one more attempt;
	// ErrNoRows when no delivery id is within scope.
	RedeliverDelivery(ctx context.Context, id string, scope DeliveryScope, now time.Time) (*Delivery, error)
	// InsertDeliveryAttempt records a settled attempt (in the settling transaction).
	InsertDeliveryAttempt(ctx context.Context, a *DeliveryAttempt) error
	// ListWebhookDeliveries is the log's page: an endpoint's deliveries, newest first
	// by (created, id), those before the cursor when it is set, at most limit.
	ListWebhookDeliveries(ctx context.Context, webhookID string, before *DeliveryCursor, limit int) ([]*Delivery, error)
	// ListDeliveryAttempts returns the newest attempts of each of the deliveries, at
	// most newest each, among those its Attempts counts (numbers 1 to Attempts), by
	// delivery and attempt number.
	ListDeliveryAttempts(ctx context.Context, ds []*Delivery, newest int) ([]*DeliveryAttempt, error)
}

// DeliveryScope narrows a statement to one account's, and one endpoint's, deliveries;
// empty fields do not narrow (the operator's commands).
type DeliveryScope struct {
	AccountID string
	WebhookID string
}

// ClaimedDelivery is a leased delivery with its endpoint and event, still sealed.
type ClaimedDelivery struct {
	Delivery
	// Lease is this claim's token: settling is fenced by it.
	Lease          string
	SealedSecret   []byte
	SealedBody     []byte
	EventCreatedAt time.Time
}

// DeliverySettlement is what an attempt leaves on its delivery.
type DeliverySettlement struct {
	Status         DeliveryStatus
	Attempts       int
	LastStatusCode int
	LastError      string
	LastAttemptAt  time.Time
	NextAttemptAt  time.Time
	DeliveredAt    *time.Time
}
