package discord

import (
	"bytes"
	"context"
	"errors"

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

// maxQuestionChars bounds an approval's question: a message holds 2,000 characters,
// and the decision line is added under the question once decided.
const maxQuestionChars = 1900

// postApproval asks the thread for a decision, with Allow and Deny buttons; when the
// question could not hold the whole input, the input is attached to it as a file.
func (b *Bot) postApproval(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	if n.PartsPosted > 0 {
		return core.ChatPostResult{PartsPosted: n.PartsPosted, Done: true}
	}
	q := words.Question(chat.AskOf(n), maxQuestionChars)
	msg := &discordgo.MessageSend{
		Content: q.Text, AllowedMentions: &discordgo.MessageAllowedMentions{},
		Components: buttons(
			discordgo.Button{Label: chat.LabelAllow, Style: discordgo.SuccessButton, CustomID: customID(core.ChatActionAllow, n.ApprovalID)},
			discordgo.Button{Label: chat.LabelDeny, Style: discordgo.DangerButton, CustomID: customID(core.ChatActionDeny, n.ApprovalID)}),
	}
	if q.FileName != "" {
		msg.Files = []*discordgo.File{{Name: q.FileName, ContentType: "application/json", Reader: bytes.NewReader(q.FileBody)}}
	}
	m, err := b.s.ChannelMessageSendComplex(threadOf(n.Place), msg, discordgo.WithContext(ctx))
	res := result(err)
	if res.Done {
		res.PartsPosted, res.Ref = 1, m.ID
	}
	return res
}

// threadOf is where a notice goes: its thread, else its channel.
func threadOf(p core.ChatPlace) string {
	if p.ThreadID == "" {
		return p.ChannelID
	}
	return p.ThreadID
}

// postDecided edits an approval's message to say how it was decided, without buttons
// (a decision taken anywhere: every thread shows it). Its attachment stays.
func (b *Bot) postDecided(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	text := decidedText(words.Question(chat.AskOf(n), maxQuestionChars).Text, n.Status, n.DecidedBy)
	components := []discordgo.MessageComponent{}
	_, err := b.s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: n.MessageRef, Channel: threadOf(n.Place), Content: &text,
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

// decidedText is an approval's question with how it was decided under it.
func decidedText(question string, status core.ApprovalStatus, by string) string {
	who := chat.DecidedBy(by, core.PlatformDiscord, func(id string) string { return "<@" + id + ">" })
	return words.Decided(question, status, who)
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
