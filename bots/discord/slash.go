package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// onCommand handles /workspace prompt:<text> [project] [agent] [model]. Its deferred
// response is edited into the outcome: a link to the thread the workspace lives in,
// or why not. In a workspace's thread it sends a message instead.
func (h *handling) onCommand(ctx context.Context, i *discordgo.Interaction) error {
	opts := map[string]string{}
	for _, o := range i.ApplicationCommandData().Options {
		if o.Type == discordgo.ApplicationCommandOptionString {
			opts[o.Name] = strings.TrimSpace(o.StringValue())
		}
	}
	var roles []string
	if i.Member != nil {
		roles = i.Member.Roles
	}
	prompt := opts["prompt"]
	in := core.ChatInput{Key: "discord:" + i.GuildID + ":interaction:" + i.ID, Text: prompt,
		Project: opts["project"], Agent: opts["agent"], Model: opts["model"]}
	switch {
	case i.Member != nil && i.Member.User != nil:
		in.UserID, in.UserName = i.Member.User.ID, personName(i.Member, i.Member.User)
	case i.User != nil:
		in.UserID, in.UserName = i.User.ID, personName(nil, i.User)
	}

	sess, err := h.svc.ChatSessionForThread(ctx, core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID, ThreadID: i.ChannelID})
	if err == nil { // in a workspace's thread: a message for it
		if err := sess.Permits(roles); err != nil {
			return h.answer(ctx, i, chat.Discord.Refusal(err))
		}
		if _, err := h.svc.SendFromChat(ctx, sess, in); err != nil {
			return h.answerRefusal(ctx, i, err)
		}
		return h.answer(ctx, i, "Sent to workspace `"+sess.Thread.WorkspaceID+"`: "+quote(prompt))
	}
	if !isCode(err, core.CodeChatNoWorkspace) {
		return h.answerRefusal(ctx, i, err)
	}
	info, err := h.channel(ctx, i.ChannelID)
	if err != nil {
		return err
	}
	place := core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID, ChannelID: i.ChannelID}
	if info.isThread {
		place.ChannelID, place.ThreadID = info.parent, i.ChannelID
	}
	if sess, err = h.svc.ChatSessionFor(ctx, place); err != nil {
		return h.answerRefusal(ctx, i, err)
	}
	if err := sess.Permits(roles); err != nil {
		return h.answer(ctx, i, chat.Discord.Refusal(err))
	}
	if !info.isThread {
		// The thread hangs on the command's own response message, so a retried
		// event finds the thread its first attempt made.
		msg, err := h.edit(ctx, i, "Starting a workspace: "+quote(prompt))
		if err != nil || msg == nil {
			return err // nil: the interaction is gone (logged); nothing to start from
		}
		if sess.Place.ThreadID, err = h.startThread(ctx, i.ChannelID, msg.ID, prompt); err != nil {
			return h.answerRefusal(ctx, i, err)
		}
	}
	ws, err := h.svc.StartFromChat(ctx, sess, in)
	if err != nil {
		return h.answerRefusal(ctx, i, err)
	}
	return h.answer(ctx, i, fmt.Sprintf("Started workspace `%s` (branch `%s`) in <#%s>: %s", ws.ID, ws.Branch, sess.Place.ThreadID, quote(prompt)))
}

// answer edits the command's deferred response. A Discord error worth retrying goes
// back to the inbox (the edit is idempotent); others are logged.
func (h *handling) answer(ctx context.Context, i *discordgo.Interaction, text string) error {
	_, err := h.edit(ctx, i, text)
	return err
}

func (h *handling) answerRefusal(ctx context.Context, i *discordgo.Interaction, err error) error {
	if retryable(err) {
		return err
	}
	return h.answer(ctx, i, chat.Discord.Refusal(err))
}

func (h *handling) edit(ctx context.Context, i *discordgo.Interaction, text string) (*discordgo.Message, error) {
	msg, err := h.s.InteractionResponseEdit(i, &discordgo.WebhookEdit{Content: &text,
		AllowedMentions: &discordgo.MessageAllowedMentions{}}, discordgo.WithContext(ctx))
	if err != nil && !discordTransient(err) {
		h.log.Warn("discord: command response not edited", "interaction", i.ID, "err", err)
		return nil, nil
	}
	return msg, err
}

// quote shows the first line of a prompt, shortened.
func quote(prompt string) string {
	return "“" + chat.Discord.Literal(threadName(prompt)) + "”"
}
