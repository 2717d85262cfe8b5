package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// command runs a bot command (`help`, `use <project>`, `follow all|mentions`,
// `status`, `archive`); handled is false when text is a message for the agent.
func (h *handling) command(ctx context.Context, sess *core.ChatSession, text string) (handled bool, err error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return false, nil
	}
	word := strings.ToLower(fields[0])
	rest := strings.TrimSpace(strings.TrimPrefix(text, fields[0]))
	place := sess.Place
	switch {
	case word == "help" && rest == "":
		h.say(place, helpText(h.self))
	case word == "use" && rest != "" && len(fields) == 2:
		p, err := h.svc.UseProject(ctx, sess, rest)
		if err != nil {
			return true, h.refuse(place, err)
		}
		h.say(place, fmt.Sprintf("New workspaces started in this channel will use project **%s**.", escape(p.DisplayName)))
	case word == "follow" && (strings.EqualFold(rest, "all") || strings.EqualFold(rest, "mentions")):
		all := strings.EqualFold(rest, "all")
		if err := h.svc.SetFollow(ctx, sess, all); err != nil {
			return true, h.refuse(place, err)
		}
		if all {
			h.say(place, "I'll take every message in this thread as a message for the agent.")
		} else {
			h.say(place, fmt.Sprintf("I'll only take messages that mention <@%s> in this thread.", h.self))
		}
	case word == "status" && rest == "":
		st, err := h.svc.ThreadStatus(ctx, sess)
		if err != nil {
			return true, h.refuse(place, err)
		}
		h.say(place, statusText(st))
	case word == "archive" && rest == "":
		ws, err := h.svc.ArchiveThread(ctx, sess)
		if err != nil {
			return true, h.refuse(place, err)
		}
		h.say(place, fmt.Sprintf("Archiving workspace `%s` (branch `%s`). Start a new thread to work again.", ws.ID, ws.Branch))
	default:
		return false, nil
	}
	return true, nil
}

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

	sess, err := h.svc.ChatSessionForThread(ctx, core.ChatPlace{Platform: core.PlatformDiscord, TeamID: i.GuildID, ThreadID: i.ChannelID})
	if err == nil { // in a workspace's thread: a message for it
		if err := sess.Permits(roles); err != nil {
			return h.answer(ctx, i, words.Refusal(err))
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
		return h.answer(ctx, i, words.Refusal(err))
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
	return h.answer(ctx, i, words.Refusal(err))
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
	return "“" + escape(threadName(prompt)) + "”"
}

// markdown escapes Discord's formatting characters.
var markdown = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`, `>`, `\>`,
	`[`, `\[`, `]`, `\]`, `#`, `\#`)

// escape keeps text from people or agents from formatting in a line of the bot's own
// (no line pings anyone: every post allows no mentions).
func escape(s string) string { return markdown.Replace(s) }

func helpText(self string) string {
	m := "<@" + self + ">"
	return strings.Join([]string{
		"I start coding workspaces from threads and post the agent's replies there.",
		"• " + m + " *what to do* in a channel starts a workspace in a new thread; files on the message are attached. `/workspace` does the same.",
		"• " + m + " *more* in that thread sends the agent another message.",
		"• " + m + " `follow all` takes every message in the thread as a message; `follow mentions` undoes it.",
		"• " + m + " `status` shows the workspace's state, branch, agent, model and queued messages.",
		"• " + m + " `archive` archives the thread's workspace.",
		"• " + m + " `use` *project* sets this channel's project for new workspaces.",
		"• " + m + " `help` shows this.",
	}, "\n")
}

func statusText(st *core.ChatStatus) string {
	ws := st.Workspace
	return fmt.Sprintf("Workspace `%s` is **%s** (agent %s).\nProject **%s**, branch `%s`.\nAgent %s, model `%s`.\nQueued messages: %d.",
		ws.ID, ws.State, ws.AgentStatus(), escape(st.Project.DisplayName), ws.Branch, chat.AgentName(ws.Agent),
		ws.Model, st.Queued)
}
