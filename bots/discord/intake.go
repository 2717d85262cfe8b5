package discord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// envelope is what the bot stores in the chat inbox: the event's own JSON, as Discord
// sent it, and which kind it is.
type envelope struct {
	Kind string          `json:"kind"` // "message" or "interaction"
	Data json.RawMessage `json:"data"`
}

// inMessage is the part of a MESSAGE_CREATE the intake reads.
type inMessage struct {
	ID        string `json:"id"`
	ChannelID string `json:"channel_id"`
	GuildID   string `json:"guild_id"`
	Author    struct {
		ID  string `json:"id"`
		Bot bool   `json:"bot"`
	} `json:"author"`
	Mentions []struct {
		ID string `json:"id"`
	} `json:"mentions"`
}

func (m inMessage) mentions(id string) bool {
	return slices.ContainsFunc(m.Mentions, func(u struct {
		ID string `json:"id"`
	}) bool {
		return u.ID == id
	})
}

// commandName is the slash command the bot registers.
const commandName = "workspace"

// onGatewayEvent stores the gateway events the bot acts on, before anything else, so
// that a crash loses nothing; the inbox worker does the work. Discord does not send a
// gateway event twice, but a RESUME can replay one: the inbox drops duplicates by id.
func (b *Bot) onGatewayEvent(s *discordgo.Session, e *discordgo.Event) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch e.Type {
	case "MESSAGE_CREATE":
		b.acceptMessage(ctx, e.RawData)
	case "INTERACTION_CREATE":
		var i discordgo.Interaction
		if err := json.Unmarshal(e.RawData, &i); err != nil {
			return
		}
		var resp *discordgo.InteractionResponse
		switch i.Type {
		case discordgo.InteractionApplicationCommand:
			resp = b.acceptInteraction(ctx, &i, e.RawData)
		case discordgo.InteractionMessageComponent:
			resp = b.press(ctx, &i)
		default:
			return
		}
		if err := s.InteractionRespond(&i, resp, discordgo.WithContext(ctx)); err != nil {
			b.log.Warn("discord: interaction not acknowledged", "interaction", i.ID, "err", err)
		}
	}
}

// acceptMessage stores a message that mentions the bot, or that was written in a
// thread with a workspace (which may follow every message); others are not kept.
func (b *Bot) acceptMessage(ctx context.Context, raw json.RawMessage) {
	var m inMessage
	if err := json.Unmarshal(raw, &m); err != nil || m.Author.Bot || m.GuildID == "" || m.ID == "" {
		return
	}
	self, err := b.self(ctx)
	if err != nil {
		b.log.Error("discord: message dropped: the bot's id is unknown", "message", m.ID, "err", err)
		return
	}
	if m.Author.ID == self {
		return
	}
	if !m.mentions(self) {
		// Every message of every channel arrives here: one the gateway's state knows
		// to be in a plain channel (not a thread) cannot be a workspace's, and costs
		// no database read.
		if ch, err := b.s.State.Channel(m.ChannelID); err == nil && !ch.IsThread() {
			return
		}
		known, err := b.svc.KnownChatThread(ctx, core.ChatPlace{Platform: core.PlatformDiscord, TeamID: m.GuildID, ThreadID: m.ChannelID})
		if err != nil {
			b.log.Error("discord: message dropped: the store did not answer", "message", m.ID, "err", err)
			return
		}
		if !known {
			return
		}
	}
	if err := b.store(ctx, "message:"+m.ID, m.GuildID+"/"+m.ChannelID, envelope{Kind: "message", Data: raw}); err != nil {
		b.log.Error("discord: message not stored", "message", m.ID, "err", err)
	}
}

// acceptInteraction stores a /workspace command and answers with what Discord must
// hear within 3 seconds: a deferred response, edited later by the inbox worker, or
// (ephemeral) why the command was not taken.
func (b *Bot) acceptInteraction(ctx context.Context, i *discordgo.Interaction, raw json.RawMessage) *discordgo.InteractionResponse {
	if i.ApplicationCommandData().Name != commandName {
		return ephemeral("I don't know that command.")
	}
	if i.GuildID == "" {
		return ephemeral(chat.Discord.Refusal(core.Errorf(core.CodeChatDirectMessage, "direct message")))
	}
	if err := b.precheck(ctx, i); err != nil {
		var ce *core.Error
		if errors.As(err, &ce) { // a refusal: said to the member alone, nothing stored
			return ephemeral(chat.Discord.Refusal(err))
		}
		b.log.Warn("discord: command precheck failed; taking the command", "interaction", i.ID, "err", err)
	}
	if err := b.store(ctx, "interaction:"+i.ID, i.GuildID+"/"+i.ChannelID, envelope{Kind: "interaction", Data: raw}); err != nil {
		b.log.Error("discord: interaction not stored", "interaction", i.ID, "err", err)
		return ephemeral("The hub couldn't take this right now. Try again in a moment.")
	}
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}
}

// precheck refuses a command the binding would refuse (no binding, a member without
// the roles, a channel outside the list) before it is deferred, so the refusal can be
// ephemeral. The handler checks again; an error that is not a refusal lets the command
// through to it.
func (b *Bot) precheck(ctx context.Context, i *discordgo.Interaction) error {
	place := core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID, ChannelID: i.ChannelID}
	sess, err := b.svc.ChatSessionForThread(ctx, core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID, ThreadID: i.ChannelID})
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != core.CodeChatNoWorkspace {
			return err
		}
		if sess, err = b.svc.ChatSessionFor(ctx, place); err != nil {
			return err
		}
		if len(sess.Binding.Channels) > 0 {
			info, err := b.channel(ctx, i.ChannelID)
			if err != nil {
				return err
			}
			if info.isThread {
				sess.Place.ChannelID = info.parent
			}
		}
	}
	var roles []string
	if i.Member != nil {
		roles = i.Member.Roles
	}
	return sess.Permits(roles)
}

func ephemeral(text string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{Content: text, Flags: discordgo.MessageFlagsEphemeral,
			AllowedMentions: &discordgo.MessageAllowedMentions{}}}
}

// store puts an event in the inbox, trying a few times over a short outage: the
// gateway does not deliver an event again.
func (b *Bot) store(ctx context.Context, id, threadKey string, env envelope) error {
	payload, err := json.Marshal(env)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		_, err = b.svc.AcceptChatEvent(ctx, core.ChatArrival{Platform: core.PlatformDiscord, EventID: id, ThreadKey: threadKey, Payload: payload})
		if err == nil || attempt == storeAttempts {
			return err
		}
		if werr := storeBackoff.Wait(ctx, attempt, nil); werr != nil {
			return err
		}
	}
}

// storeAttempts and storeBackoff bound how long an event waits for the inbox over a
// short outage: 0.2, 0.4 and 0.8 s between four attempts, cut short when the gateway
// session ends.
const storeAttempts = 4

var storeBackoff = core.Backoff{First: 200 * time.Millisecond, Max: 800 * time.Millisecond}

// InteractionsHandler serves POST /discord/interactions: the Ed25519 signature over
// timestamp and raw body is checked before anything is parsed (401 and nothing stored
// when it fails), PING is answered, a /workspace command is stored and answered with a
// deferred response, and a press of one of the bot's buttons is taken (buttons.go).
func (b *Bot) InteractionsHandler(c *fiber.Ctx) error {
	// The raw bytes (never c.Body(), which would inflate an encoded body); a copy, as
	// fasthttp reuses its buffers.
	body := append([]byte(nil), c.Request().Body()...)
	if !b.verify(c, body) {
		return c.Status(http.StatusUnauthorized).JSON(fiber.Map{"error": "invalid_signature"})
	}
	var i discordgo.Interaction
	if err := json.Unmarshal(body, &i); err != nil {
		return c.Status(http.StatusBadRequest).JSON(fiber.Map{"error": "invalid_json"})
	}
	switch i.Type {
	case discordgo.InteractionPing:
		return c.JSON(discordgo.InteractionResponse{Type: discordgo.InteractionResponsePong})
	case discordgo.InteractionApplicationCommand:
		return c.JSON(b.acceptInteraction(c.UserContext(), &i, body))
	case discordgo.InteractionMessageComponent:
		return c.JSON(b.press(c.UserContext(), &i))
	}
	return c.Status(http.StatusBadRequest).JSON(fiber.Map{"error": "unsupported_interaction"})
}

// maxInteractionSkew is how far an interaction's signed timestamp may be from now,
// either way (Slack's window): a request captured once cannot be replayed later.
const maxInteractionSkew = 5 * time.Minute

// verify checks X-Signature-Ed25519 over X-Signature-Timestamp + body with
// discordgo.VerifyInteraction, and that the timestamp is within maxInteractionSkew
// of now; discordgo checks the signature only, so an old signed request would pass.
func (b *Bot) verify(c *fiber.Ctx, body []byte) bool {
	if b.pub == nil {
		return false
	}
	sec, err := strconv.ParseInt(c.Get("X-Signature-Timestamp"), 10, 64)
	if err != nil {
		return false
	}
	if skew := b.cfg.Clock.Now().Sub(time.Unix(sec, 0)); skew > maxInteractionSkew || skew < -maxInteractionSkew {
		return false
	}
	r, err := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	if err != nil {
		return false
	}
	r.Header.Set("X-Signature-Ed25519", c.Get("X-Signature-Ed25519"))
	r.Header.Set("X-Signature-Timestamp", c.Get("X-Signature-Timestamp"))
	return discordgo.VerifyInteraction(r, b.pub)
}
