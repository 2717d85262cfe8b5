package discord

import (
	"context"
	"errors"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Turn status messages and approval messages (issue 16), with message components
// (https://discord.com/developers/docs/interactions/message-components): a running
// turn's status has a Stop button, an approval Allow and Deny. A button's custom_id
// is "wshub:<action>:<turn or approval id>".

const customPrefix = "wshub:"

// Discord's JSON error code for a message that no longer exists.
const unknownMessage = 10008

var _ core.ChatStatusPoster = (*Bot)(nil)

func customID(action, target string) string { return customPrefix + action + ":" + target }

func buttons(bs ...discordgo.Button) []discordgo.MessageComponent {
	row := discordgo.ActionsRow{}
	for _, b := range bs {
		row.Components = append(row.Components, b)
	}
	return []discordgo.MessageComponent{row}
}

// PostStatus posts a turn's status in its thread, or edits it in place once posted;
// the Stop button is there while the turn runs and removed when it ends. An edit of
// a message that is gone (deleted in Discord) posts a new one.
func (b *Bot) PostStatus(ctx context.Context, v core.ChatStatusView) (string, core.ChatPostResult) {
	text := words.StatusText(v)
	components := []discordgo.MessageComponent{}
	if !v.Finished {
		components = buttons(discordgo.Button{Label: chat.LabelStop, Style: discordgo.DangerButton,
			CustomID: customID(core.ChatActionStop, v.TurnID)})
	}
	target := v.Place.ThreadID
	if target == "" {
		target = v.Place.ChannelID
	}
	if v.MessageRef != "" {
		_, err := b.s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: v.MessageRef, Channel: target, Content: &text,
			Components: &components, AllowedMentions: &discordgo.MessageAllowedMentions{}}, discordgo.WithContext(ctx))
		if apiCode(err) != unknownMessage {
			return v.MessageRef, result(err)
		}
	}
	m, err := b.s.ChannelMessageSendComplex(target, &discordgo.MessageSend{Content: text, Components: components,
		AllowedMentions: &discordgo.MessageAllowedMentions{}}, discordgo.WithContext(ctx))
	if err != nil {
		return "", result(err)
	}
	return m.ID, result(nil)
}

// postApproval asks the thread for a decision, with Allow and Deny buttons.
func (b *Bot) postApproval(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	if n.PartsPosted > 0 {
		return core.ChatPostResult{PartsPosted: n.PartsPosted, Done: true}
	}
	target := n.Place.ThreadID
	if target == "" {
		target = n.Place.ChannelID
	}
	// Allow only under a question that shows what it allows whole.
	var choices []discordgo.Button
	if chat.ApprovalShownWhole(n.Summary) {
		choices = append(choices, discordgo.Button{Label: chat.LabelAllow, Style: discordgo.SuccessButton, CustomID: customID(core.ChatActionAllow, n.ApprovalID)})
	}
	choices = append(choices, discordgo.Button{Label: chat.LabelDeny, Style: discordgo.DangerButton, CustomID: customID(core.ChatActionDeny, n.ApprovalID)})
	m, err := b.s.ChannelMessageSendComplex(target, &discordgo.MessageSend{
		Content: words.ApprovalText(n.Tool, n.Summary), AllowedMentions: &discordgo.MessageAllowedMentions{},
		Components: buttons(choices...),
	}, discordgo.WithContext(ctx))
	res := result(err)
	if res.Done {
		res.PartsPosted, res.Ref = 1, m.ID
	}
	return res
}

// postDecided edits an approval's message to say how it was decided, without buttons
// (a decision taken anywhere: every thread shows it).
func (b *Bot) postDecided(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	target := n.Place.ThreadID
	if target == "" {
		target = n.Place.ChannelID
	}
	text := decidedText(words.ApprovalText(n.Tool, n.Summary), n.Status, n.DecidedBy)
	components := []discordgo.MessageComponent{}
	_, err := b.s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: n.MessageRef, Channel: target, Content: &text,
		Components: &components, AllowedMentions: &discordgo.MessageAllowedMentions{}}, discordgo.WithContext(ctx))
	if apiCode(err) == unknownMessage {
		err = nil // deleted in Discord: nothing left to edit
	}
	res := result(err)
	if res.Done {
		res.PartsPosted = 1
	}
	return res
}

// decidedText is an approval's question (its first line) with how it was decided.
func decidedText(question string, status core.ApprovalStatus, by string) string {
	question, _, _ = strings.Cut(question, "\n")
	who := chat.DecidedBy(by, core.PlatformDiscord, func(id string) string { return "<@" + id + ">" })
	return question + "\n" + words.DecisionLine(status, who)
}

// result judges one REST call as a post, as postParts does.
func result(err error) core.ChatPostResult {
	if err == nil {
		return core.ChatPostResult{Done: true}
	}
	res := core.ChatPostResult{Error: err.Error()}
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		res.RetryAfter = rl.RetryAfter
	} else {
		res.Permanent = permanent(err)
	}
	return res
}
