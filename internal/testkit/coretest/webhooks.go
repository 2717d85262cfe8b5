package coretest

import (
	"context"
	"sync"

	"github.com/wshub/wshub/core"
)

// Receiver is core's WebhookSender in a test: every attempt is acknowledged and kept,
// and nothing leaves the process.
type Receiver struct {
	mu       sync.Mutex
	attempts []core.WebhookAttempt
}

var _ core.WebhookSender = (*Receiver)(nil)

// Send keeps the attempt and acknowledges it.
func (r *Receiver) Send(_ context.Context, a core.WebhookAttempt) core.WebhookAttemptResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attempts = append(r.attempts, a)
	return core.WebhookAttemptResult{StatusCode: 200}
}

// AddWebhook registers an endpoint for acct (its address is never called).
func (c *Core) AddWebhook(acct *core.Account) *core.Webhook {
	c.t.Helper()
	url := "https://hooks.example.com/" + acct.ID
	w, _, err := c.Webhooks.CreateWebhook(context.Background(), acct, core.CreateWebhookInput{URL: &url})
	if err != nil {
		c.t.Fatalf("add webhook: %v", err)
	}
	return w
}

// Deliver attempts every webhook delivery that is due, as the delivery worker does,
// and returns the events delivered, in order, by their bodies (JSON).
func (c *Core) Deliver() []string {
	c.t.Helper()
	ctx := context.Background()
	var bodies []string
	for {
		jobs, err := c.Deliveries.ClaimDeliveries(ctx, LeaseFor, 100)
		if err != nil {
			c.t.Fatalf("claim deliveries: %v", err)
		}
		if len(jobs) == 0 {
			return bodies
		}
		for _, j := range jobs {
			c.Receiver.mu.Lock()
			before := len(c.Receiver.attempts)
			c.Receiver.mu.Unlock()
			if _, err := c.Deliveries.AttemptDelivery(ctx, j); err != nil {
				c.t.Fatalf("attempt delivery %s: %v", j.ID, err)
			}
			c.Receiver.mu.Lock()
			for _, a := range c.Receiver.attempts[before:] {
				bodies = append(bodies, string(a.Body))
			}
			c.Receiver.mu.Unlock()
		}
	}
}
