package slack

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/slack-go/slack"
)

// callback is the part of an Events API envelope the bot reads.
type callback struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	TeamID    string `json:"team_id"`
	EventID   string `json:"event_id"`
	Event     event  `json:"event"`
}

// event is the inner event: app_mention or message.
type event struct {
	Type     string `json:"type"`
	SubType  string `json:"subtype"`
	User     string `json:"user"`
	BotID    string `json:"bot_id"`
	Text     string `json:"text"`
	TS       string `json:"ts"`
	ThreadTS string `json:"thread_ts"`
	Channel  string `json:"channel"`
	Team     string `json:"team"`
	Files    []file `json:"files"`
}

type file struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Mimetype    string `json:"mimetype"`
	Size        int    `json:"size"`
	DownloadURL string `json:"url_private_download"`
}

// thread is the thread a message belongs to: its root's ts (a root is its own).
func (e event) thread() string {
	if e.ThreadTS != "" {
		return e.ThreadTS
	}
	return e.TS
}

// threadKey orders one thread's events in the inbox.
func (c callback) threadKey() string {
	return c.TeamID + "/" + c.Event.Channel + "/" + c.Event.thread()
}

// EventsHandler serves POST /slack/events: it verifies Slack's signature over the raw
// body before reading it, answers url_verification, and stores each event callback in
// the inbox (deduplicating Slack's retries by event_id) before acknowledging; the
// inbox worker does the slow work. Slack wants an answer within 3 seconds.
func (b *Bot) EventsHandler(c *fiber.Ctx) error {
	// The raw bytes, never c.Body(), which inflates an encoded body before the signature
	// is checked (the api package refuses encoded bodies before this runs). A copy:
	// fasthttp reuses its buffers.
	body := append([]byte(nil), c.Request().Body()...)
	if err := b.verify(c, body); err != nil {
		b.log.Warn("slack event refused: bad signature", "err", err)
		return c.Status(http.StatusUnauthorized).JSON(fiber.Map{"error": "invalid_signature"})
	}
	var cb callback
	if err := json.Unmarshal(body, &cb); err != nil {
		return c.Status(http.StatusBadRequest).JSON(fiber.Map{"error": "invalid_json"})
	}
	switch cb.Type {
	case "url_verification":
		return c.JSON(fiber.Map{"challenge": cb.Challenge})
	case "event_callback":
		if err := b.accept(c.UserContext(), body); err != nil {
			b.log.Error("slack event not stored", "event", cb.EventID, "err", err)
			// 5xx: Slack retries the event later.
			return c.Status(http.StatusServiceUnavailable).JSON(fiber.Map{"error": "service_unavailable"})
		}
	}
	return c.SendStatus(http.StatusOK)
}

// verify checks X-Slack-Signature (HMAC-SHA256 of "v0:<timestamp>:<body>") and the
// timestamp's age with slack-go's SecretsVerifier.
func (b *Bot) verify(c *fiber.Ctx, body []byte) error {
	if b.cfg.SigningSecret == "" {
		return errors.New("WSHUB_SLACK_SIGNING_SECRET is not set")
	}
	h := http.Header{}
	h.Set("X-Slack-Signature", c.Get("X-Slack-Signature"))
	h.Set("X-Slack-Request-Timestamp", c.Get("X-Slack-Request-Timestamp"))
	sv, err := slack.NewSecretsVerifier(h, b.cfg.SigningSecret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	return sv.Ensure()
}
