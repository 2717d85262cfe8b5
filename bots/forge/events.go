package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// A delivery is answered as soon as it is stored (the forges wait 10 s at most, and
// retry or give up on a slow answer): handling it is the inbox worker's.

// headers are where each forge says a delivery's id, its event and its signature.
type headers struct {
	delivery []string // the first one present wins
	event    string
	verify   func(c *fiber.Ctx, body, secret []byte) bool
}

var forgeHeaders = map[string]headers{
	// Gitea signs the body with HMAC-SHA256, in hex.
	core.ForgeGitea: {delivery: []string{"X-Gitea-Delivery"}, event: "X-Gitea-Event",
		verify: func(c *fiber.Ctx, body, secret []byte) bool {
			return equalMAC(c.Get("X-Gitea-Signature"), body, secret)
		}},
	// GitHub signs the body with HMAC-SHA256, "sha256=" and hex.
	core.ForgeGitHub: {delivery: []string{"X-GitHub-Delivery"}, event: "X-GitHub-Event",
		verify: func(c *fiber.Ctx, body, secret []byte) bool {
			sig, ok := strings.CutPrefix(c.Get("X-Hub-Signature-256"), "sha256=")
			return ok && equalMAC(sig, body, secret)
		}},
	// GitLab sends the secret itself. Idempotency-Key stays the same across a
	// delivery's retries (GitLab 17.4 on); X-Gitlab-Event-UUID before it.
	core.ForgeGitLab: {delivery: []string{"Idempotency-Key", "X-Gitlab-Event-UUID"}, event: "X-Gitlab-Event",
		verify: func(c *fiber.Ctx, _, secret []byte) bool {
			token := c.Get("X-Gitlab-Token")
			return token != "" && subtle.ConstantTimeCompare([]byte(token), secret) == 1
		}},
}

// equalMAC reports whether sig (hex) is body's HMAC-SHA256 under secret, in constant
// time.
func equalMAC(sig string, body, secret []byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(sig))
	if err != nil || len(got) != sha256.Size {
		return false
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// EventsHandler takes kind's deliveries (POST /forge/<kind>/events): 202 stored, 200
// for a redelivery, a repository no project takes events from or a GitHub App
// installation no account has, 401 when the
// signature matches no project of the repository (nothing is stored), 413 over
// MaxBodyBytes.
func (b *Bot) EventsHandler(kind string) fiber.Handler {
	hd := forgeHeaders[kind]
	return func(c *fiber.Ctx) error {
		body := c.Body()
		if len(body) > MaxBodyBytes { // a chunked body has no Content-Length to refuse early
			return c.SendStatus(fiber.StatusRequestEntityTooLarge)
		}
		delivery := ""
		for _, h := range hd.delivery {
			if delivery = c.Get(h); delivery != "" {
				break
			}
		}
		if delivery == "" || len(delivery) > 200 {
			return c.Status(fiber.StatusBadRequest).SendString("the delivery has no id")
		}
		ev, err := parse(kind, c.Get(hd.event), body)
		if err != nil {
			return c.Status(fiber.StatusBadRequest).SendString("the body is not a forge event")
		}
		// Values from the request are valid only in the handler: core keeps copies.
		in := core.ChatArrival{Platform: kind, EventID: strings.Clone(delivery), ThreadKey: ev.threadKey(),
			Payload: append([]byte(nil), body...)}
		sig := core.ForgeSignature{Event: strings.Clone(c.Get(hd.event)), Repositories: ev.Repositories, Installation: ev.Installation,
			Verify: func(secret []byte) bool { return hd.verify(c, body, secret) }}
		got, err := b.forge.AcceptForgeEvent(c.UserContext(), in, sig)
		if err != nil {
			var ce *core.Error
			if errors.As(err, &ce) {
				return c.Status(fiber.StatusBadRequest).SendString(ce.Detail)
			}
			b.log.Error("forge event not stored", "forge", kind, "delivery", delivery, "err", err)
			return c.SendStatus(fiber.StatusServiceUnavailable) // the forge retries
		}
		switch got {
		case core.ForgeAccepted:
			return c.SendStatus(fiber.StatusAccepted)
		case core.ForgeUnknownRepository:
			b.counters.UnknownRepository(kind)
			return c.Status(fiber.StatusOK).SendString("no project takes events from this repository")
		case core.ForgeUnknownInstallation:
			b.counters.UnknownInstallation(kind)
			return c.Status(fiber.StatusOK).SendString("no account has this GitHub App installation")
		case core.ForgeUnverified:
			return c.SendStatus(fiber.StatusUnauthorized)
		}
		return c.SendStatus(fiber.StatusOK) // redelivered
	}
}
