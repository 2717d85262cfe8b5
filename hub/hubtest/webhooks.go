package hubtest

import (
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
)

// StartDelivering runs a hub with its workers, the fake agent, webhooks allowed to
// reach loopback receivers, and a fast delivery poll.
func StartDelivering(t *testing.T, opts ...Option) *Hub {
	t.Helper()
	return StartRuntime(t, append([]Option{WithConfig(func(c *hub.Config) {
		c.WebhookAllowInsecure = true
		c.WebhookPoll = 50 * time.Millisecond
	})}, opts...)...)
}

// AddWebhook registers url for key's account and returns its id and secret.
func AddWebhook(t *testing.T, h *Hub, key, url string) (string, string) {
	t.Helper()
	r := h.Call("POST", "/v1/api/webhooks", key, map[string]any{"url": url}).Expect(t, 201, "")
	return r.Body["webhook"].(map[string]any)["webhookId"].(string), r.Body["secret"].(string)
}
