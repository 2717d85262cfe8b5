package core

import (
	"strings"
	"time"
	"unicode/utf8"
)

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
	// EventType and WorkspaceID are the event's (read with the delivery for the log).
	EventType   string
	WorkspaceID string
	// Log is the delivery's newest recorded attempts (LogAttemptsShown at most), oldest
	// first, filled by the log's reads only. A delivery redelivered past that, or made
	// before the log existed, has fewer than Attempts: EarlierAttempts says how many.
	Log []*DeliveryAttempt
}

// EarlierAttempts is how many of the delivery's attempts its Log leaves out: all come
// before those it holds, since the log shows the newest and attempts are numbered 1 to
// Attempts.
func (d *Delivery) EarlierAttempts() int { return max(d.Attempts-len(d.Log), 0) }

// Bounds of an attempt's record (the migration's CHECKs hold them too).
const (
	// MaxAttemptExcerptBytes is how much of a receiver's response body is kept: enough
	// to read an error page's first lines, small enough to keep 20 attempts of every
	// delivery for the retention period.
	MaxAttemptExcerptBytes = 1024
	// MaxAttemptErrorBytes bounds an attempt's error text.
	MaxAttemptErrorBytes = 1024
)

// DeliveryAttempt is one settled attempt of a delivery, as the delivery log keeps it.
// An attempt cut short by the hub stopping is not settled and leaves no record (it is
// made again with the same number).
type DeliveryAttempt struct {
	DeliveryID string
	Attempt    int // the service-delivery-attempt header's value
	StartedAt  time.Time
	Duration   time.Duration
	StatusCode int // 0 when no response arrived
	Error      string
	// ResponseExcerpt is the start of the response body: valid UTF-8 without NULs, at
	// most MaxAttemptExcerptBytes.
	ResponseExcerpt string
}

// boundedText makes b storable and showable: valid UTF-8 (invalid bytes and NULs, which
// a text column refuses, become U+FFFD), at most max bytes, cut on a character boundary.
func boundedText(b []byte, max int) string {
	// A body read up to a limit may end inside a character: drop that partial one
	// rather than mark it invalid.
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				b = b[:len(b)-i]
			}
			break
		}
	}
	s := strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// RetryDelay is the wait before delivery attempt n+1 after attempt n failed:
// min(30 s x 2^(n-1), 1 h), api.md's schedule.
func RetryDelay(n int) time.Duration { return webhookBackoff.Delay(max(n, 1), nil) }
