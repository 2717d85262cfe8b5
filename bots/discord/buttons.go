package discord

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Button presses (MESSAGE_COMPONENT interactions), from the gateway or POST
// /discord/interactions. A press is taken at once through core (one small
// transaction: Discord wants an answer within 3 seconds), for the member who pressed
// it, only if the binding lets them talk to the thread's workspace (its roles and
// channels). Allow and Deny answer by editing the approval's message (UPDATE_MESSAGE):
// how it was decided and by whom, without its buttons; a press on one decided
// already says the same and changes nothing. Stop and refusals answer the member
// alone (ephemeral).

// press takes a press of one of the bot's buttons and returns the interaction's answer.
func (b *Bot) press(ctx context.Context, i *discordgo.Interaction) *discordgo.InteractionResponse {
	rest, ok := strings.CutPrefix(i.MessageComponentData().CustomID, customPrefix)
	kind, target, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return ephemeral("I don't know that button.")
	}
	if i.GuildID == "" {
		return ephemeral(chat.Discord.Refusal(core.Errorf(core.CodeChatDirectMessage, "direct message")))
	}
	var user, name string
	var roles []string
	switch {
	case i.Member != nil && i.Member.User != nil:
		user, roles, name = i.Member.User.ID, i.Member.Roles, personName(i.Member, i.Member.User)
	case i.User != nil:
		user, name = i.User.ID, personName(nil, i.User)
	}
	action := core.ChatAction{Place: core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID,
		ThreadID: i.ChannelID}, UserID: user, UserName: name, Roles: roles, Kind: kind, Target: target}
	if kind == core.ChatActionPullRequest {
		// The forge may take longer than the 3 seconds Discord waits: the press is
		// acknowledged now, and the offer's message is edited with the outcome.
		go b.openPullRequest(context.WithoutCancel(ctx), i, action)
		return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}
	}
	res, err := b.svc.Act(ctx, action)
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) {
			b.log.Error("discord: button press failed", "action", kind, "err", err)
		}
		return ephemeral(chat.Discord.Refusal(err))
	}
	if kind == core.ChatActionStop {
		if res.Done {
			return ephemeral("Stopping the turn.")
		}
		return ephemeral("That turn has already ended.")
	}
	question := ""
	if i.Message != nil {
		question = i.Message.Content
	}
	return &discordgo.InteractionResponse{Type: discordgo.InteractionResponseUpdateMessage,
		Data: &discordgo.InteractionResponseData{Content: chat.Discord.DecidedText(question, res.Status, res.DecidedBy, res.DeciderName),
			Components: []discordgo.MessageComponent{}, AllowedMentions: &discordgo.MessageAllowedMentions{}}}
}

// openPullRequest takes an Open pull request press, after its deferred answer: the
// offer's message becomes the pull request's link (or says the next push opens it),
// without its button; a refusal is said in the message, and the button stays for
// someone who may.
func (b *Bot) openPullRequest(ctx context.Context, i *discordgo.Interaction, a core.ChatAction) {
	ctx, cancel := context.WithTimeout(ctx, pullRequestPressTimeout)
	defer cancel()
	res, err := b.svc.Act(ctx, a)
	edit := &discordgo.WebhookEdit{AllowedMentions: &discordgo.MessageAllowedMentions{}}
	if err != nil {
		var ce *core.Error
		if !errors.As(err, &ce) {
			b.log.Error("discord: button press failed", "action", a.Kind, "err", err)
		}
		text := chat.Discord.Refusal(err)
		edit.Content = &text
	} else {
		text := chat.Discord.PullRequestAnswer(res.Workspace)
		edit.Content, edit.Components = &text, &[]discordgo.MessageComponent{}
	}
	if _, err := b.s.InteractionResponseEdit(i, edit, discordgo.WithContext(ctx)); err != nil {
		b.log.Warn("discord: pull request offer not updated", "interaction", i.ID, "err", err)
	}
}

// pullRequestPressTimeout bounds an Open pull request press: the forge calls (30 s at
// most) and the message's edit.
const pullRequestPressTimeout = 45 * time.Second
