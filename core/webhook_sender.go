package core

import (
	"context"
	"time"
)

// WebhookAttempt is one signed POST of an event's body to an endpoint.
type WebhookAttempt struct {
	URL     string
	Secret  string // the whole whsec_ secret, prefix included
	EventID string
	Attempt int // 1 for the first attempt (service-delivery-attempt)
	Body    []byte
}

// WebhookAttemptResult is how an attempt ended. Error is empty only for an
// acknowledgement (a 2xx within the time limit); otherwise it says why, in words fit
// for an operator ("HTTP 500", "timed out after 10s", "redirect (302) not followed",
// "address 10.0.0.7 is not allowed").
type WebhookAttemptResult struct {
	StatusCode int // 0 when no response arrived
	Error      string
	// Duration is how long the attempt took, measured by the sender's own (monotonic)
	// clock: the hub's clock may be a test's, standing still.
	Duration time.Duration
	// Excerpt is the start of the response body, at most MaxAttemptExcerptBytes as
	// received (core makes it valid text before keeping it).
	Excerpt []byte
}

// Acknowledged reports whether the receiver took the event.
func (r WebhookAttemptResult) Acknowledged() bool { return r.Error == "" }

// WebhookSender makes delivery attempts: it signs the body (api.md 6.1, 6.3), posts it
// under the 10-second limit without following redirects, and refuses addresses that
// must not be reached (behaviour.md, webhooks). It never returns a Go error: every
// failure is an attempt result.
type WebhookSender interface {
	Send(ctx context.Context, a WebhookAttempt) WebhookAttemptResult
}
