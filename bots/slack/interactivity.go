package slack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/slack-go/slack"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Button presses (Slack's block_actions interactions), by HTTP on POST
// /slack/interactivity or over Socket Mode. A press is taken at once through core
// (one small transaction: Slack wants an answer within 3 seconds), for the member who
// pressed it, only if the binding lets them talk to the thread's workspace. An
// approval's message is then edited to say how it was decided, without its buttons;
// a press on one decided already (a second click, an answer from elsewhere) says so
// the same way and changes nothing. A refusal is told to the member alone
// (chat.postEphemeral).

// InteractivityHandler serves POST /slack/interactivity: the signature over the raw
// body is checked first (as for events), then the form's payload is read.
func (b *Bot) InteractivityHandler(c *fiber.Ctx) error {
	body := append([]byte(nil), c.Request().Body()...)
	if err := b.verify(c, body); err != nil {
		b.log.Warn("slack interaction refused: bad signature", "err", err)
		return c.Status(http.StatusUnauthorized).JSON(fiber.Map{"error": "invalid_signature"})
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		return c.Status(http.StatusBadRequest).JSON(fiber.Map{"error": "invalid_payload"})
	}
	var ic slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &ic); err != nil {
		return c.Status(http.StatusBadRequest).JSON(fiber.Map{"error": "invalid_json"})
	}
	b.press(c.UserContext(), ic)
	return c.SendStatus(http.StatusOK)
}

// press takes a block_actions press of one of the bot's buttons; anything else is
// ignored.
func (b *Bot) press(ctx context.Context, ic slack.InteractionCallback) {
	if ic.Type != slack.InteractionTypeBlockActions || len(ic.ActionCallback.BlockActions) == 0 {
		return
	}
	act := ic.ActionCallback.BlockActions[0]
	kind := map[string]string{actionStop: core.ChatActionStop, actionAllow: core.ChatActionAllow, actionDeny: core.ChatActionDeny,
		actionPullRequest: core.ChatActionPullRequest}[act.ActionID]
	if kind == "" {
		return
	}
	team := ic.Team.ID
	if team == "" {
		team = ic.User.TeamID
	}
	channel, ts := ic.Channel.ID, ic.Message.Timestamp
	if channel == "" {
		channel, ts = ic.Container.ChannelID, ic.Container.MessageTs
	}
	thread := ic.Message.ThreadTimestamp
	if thread == "" {
		thread = ts
	}
	action := core.ChatAction{Place: core.ChatPlace{Platform: core.PlatformSlack, TeamID: team,
		ChannelID: channel, ThreadID: thread}, UserID: ic.User.ID, UserName: b.userName(ctx, ic.User.ID), Kind: kind, Target: act.Value}
	if kind == core.ChatActionPullRequest {
		// The forge may take longer than the 3 seconds Slack waits for the answer:
		// the press is answered now, and the offer's message shows the outcome.
		go b.openPullRequest(context.WithoutCancel(ctx), action, ts)
		return
	}
	res, err := b.svc.Act(ctx, action)
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) {
			b.log.Error("slack button press failed", "action", kind, "err", err)
		}
		b.tell(ctx, channel, thread, ic.User.ID, chat.Slack.Refusal(err))
		return
	}
	switch {
	case kind == core.ChatActionStop && !res.Done:
		b.tell(ctx, channel, thread, ic.User.ID, "That turn has already ended.")
	case kind != core.ChatActionStop:
		b.showDecision(ctx, channel, ts, ic.Message.Text, res)
	}
}

// openPullRequest takes an Open pull request press: the offer's message (ts) becomes
// the pull request's link, or says that the next push opens it; a refusal is told to
// the member alone, and the button stays.
func (b *Bot) openPullRequest(ctx context.Context, a core.ChatAction, ts string) {
	ctx, cancel := context.WithTimeout(ctx, pullRequestPressTimeout)
	defer cancel()
	res, err := b.svc.Act(ctx, a)
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) {
			b.log.Error("slack button press failed", "action", a.Kind, "err", err)
		}
		b.tell(ctx, a.Place.ChannelID, a.Place.ThreadID, a.UserID, chat.Slack.Refusal(err))
		return
	}
	text := chat.Slack.PullRequestAnswer(res.Workspace)
	if _, err := b.Wire.Show(ctx, core.ChatPlace{ChannelID: a.Place.ChannelID}, ts, text, ""); err != nil {
		b.log.Warn("slack pull request offer not updated", "channel", a.Place.ChannelID, "err", err)
	}
}

// pullRequestPressTimeout bounds an Open pull request press: the forge calls (30 s at
// most) and the message's edit.
const pullRequestPressTimeout = 45 * time.Second

// showDecision edits an approval's message: its question, then how it was decided,
// and no buttons.
func (b *Bot) showDecision(ctx context.Context, channel, ts, question string, res *core.ChatActionResult) {
	text := chat.Slack.DecidedText(question, res.Status, res.DecidedBy, res.DeciderName)
	if _, err := b.Wire.Show(ctx, core.ChatPlace{ChannelID: channel}, ts, text, ""); err != nil {
		b.log.Warn("slack approval message not updated", "channel", channel, "err", err)
	}
}

// tell says text to one member, in the thread, seen by them alone.
func (b *Bot) tell(ctx context.Context, channel, thread, user, text string) {
	if _, err := b.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false), slack.MsgOptionTS(thread)); err != nil {
		b.log.Warn("slack ephemeral not posted", "channel", channel, "err", err)
	}
}
