package discord

import (
	"bytes"
	"context"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Turn status messages and approval messages, with message components
// (https://discord.com/developers/docs/interactions/message-components): a running
// turn's status has a Stop button, an approval Allow and Deny. A button's custom_id
// is "wshub:<action>:<turn or approval id>".

const customPrefix = "wshub:"

// Discord's JSON error code for a message that no longer exists.
const unknownMessage = 10008

// maxQuestionChars bounds an approval's question: a message holds 2,000 characters,
// and the decision line is added under the question once decided.
const maxQuestionChars = 1900

func customID(action, target string) string { return customPrefix + action + ":" + target }

func buttons(bs ...discordgo.Button) []discordgo.MessageComponent {
	row := discordgo.ActionsRow{}
	for _, b := range bs {
		row.Components = append(row.Components, b)
	}
	return []discordgo.MessageComponent{row}
}

// Show posts a message in the thread of place, or edits message ref in place, with a
// Stop button for turn stop when there is one (an edit without takes the buttons away).
func (w wire) Show(ctx context.Context, place core.ChatPlace, ref, text, stop string) (string, error) {
	components := []discordgo.MessageComponent{}
	if stop != "" {
		components = buttons(discordgo.Button{Label: chat.LabelStop, Style: discordgo.DangerButton,
			CustomID: customID(core.ChatActionStop, stop)})
	}
	if ref != "" {
		_, err := w.s.ChannelMessageEditComplex(&discordgo.MessageEdit{ID: ref, Channel: threadOf(place), Content: &text,
			Components: &components, AllowedMentions: &discordgo.MessageAllowedMentions{}}, discordgo.WithContext(ctx))
		return ref, err
	}
	m, err := w.s.ChannelMessageSendComplex(threadOf(place), &discordgo.MessageSend{Content: text, Components: components,
		AllowedMentions: &discordgo.MessageAllowedMentions{}}, discordgo.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

// Ask posts an approval's question with Allow and Deny buttons; when the question
// could not hold the whole input, the input is attached to it as a file.
func (w wire) Ask(ctx context.Context, place core.ChatPlace, approvalID string, q chat.Question) (string, error) {
	msg := &discordgo.MessageSend{
		Content: q.Text, AllowedMentions: &discordgo.MessageAllowedMentions{},
		Components: buttons(
			discordgo.Button{Label: chat.LabelAllow, Style: discordgo.SuccessButton, CustomID: customID(core.ChatActionAllow, approvalID)},
			discordgo.Button{Label: chat.LabelDeny, Style: discordgo.DangerButton, CustomID: customID(core.ChatActionDeny, approvalID)}),
	}
	if q.FileName != "" {
		msg.Files = []*discordgo.File{{Name: q.FileName, ContentType: "application/json", Reader: bytes.NewReader(q.FileBody)}}
	}
	m, err := w.s.ChannelMessageSendComplex(threadOf(place), msg, discordgo.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

// Offer posts text with an Open pull request button for the workspace.
func (w wire) Offer(ctx context.Context, place core.ChatPlace, text, workspaceID string) (string, error) {
	m, err := w.s.ChannelMessageSendComplex(threadOf(place), &discordgo.MessageSend{Content: text,
		AllowedMentions: &discordgo.MessageAllowedMentions{},
		Components: buttons(discordgo.Button{Label: chat.LabelPullRequest, Style: discordgo.PrimaryButton,
			CustomID: customID(core.ChatActionPullRequest, workspaceID)})}, discordgo.WithContext(ctx))
	if err != nil {
		return "", err
	}
	return m.ID, nil
}

// Gone reports an edit of a message Discord no longer has (deleted in Discord).
func (wire) Gone(err error) bool { return apiCode(err) == unknownMessage }
