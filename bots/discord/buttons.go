package discord

import (
	"context"
	"errors"
	"strings"

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
	res, err := b.svc.Act(ctx, core.ChatAction{Place: core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID,
		ThreadID: i.ChannelID}, UserID: user, UserName: name, Roles: roles, Kind: kind, Target: target})
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
