package slack

import (
	"context"
	"errors"

	"github.com/slack-go/slack"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Turn status messages and approval messages, as Block Kit messages: a section with
// the words and, while there is something to press, an actions block. The text field
// carries the same words (notifications, clients without blocks).

// Action ids of the bot's buttons; each button's value is the turn or approval id.
const (
	actionStop        = "wshub_stop"
	actionAllow       = "wshub_allow"
	actionDeny        = "wshub_deny"
	actionPullRequest = "wshub_pull_request"
)

// maxQuestionChars bounds an approval's question: a section block holds 3,000
// characters, and the decision line is added under the question once decided.
const maxQuestionChars = 2900

// Show posts a message in the thread of place, or edits message ref in place
// (chat.update), with a Stop button for turn stop when there is one.
func (w wire) Show(ctx context.Context, place core.ChatPlace, ref, text, stop string) (string, error) {
	blocks := []slack.Block{section(text)}
	if stop != "" {
		blocks = append(blocks, slack.NewActionBlock("", button(actionStop, stop, chat.LabelStop, slack.StyleDanger)))
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if ref != "" {
		_, _, _, err := w.api.UpdateMessageContext(ctx, place.ChannelID, ref, opts...)
		return ref, err
	}
	_, ts, err := w.api.PostMessageContext(ctx, place.ChannelID, append(opts, slack.MsgOptionTS(place.ThreadID))...)
	return ts, err
}

// Ask posts an approval's question with Allow and Deny buttons. A message cannot carry
// a file: the question's file, when it has one, follows (PostFile).
func (w wire) Ask(ctx context.Context, place core.ChatPlace, approvalID string, q chat.Question) (string, error) {
	_, ts, err := w.api.PostMessageContext(ctx, place.ChannelID, slack.MsgOptionTS(place.ThreadID),
		slack.MsgOptionText(q.Text, false), slack.MsgOptionBlocks(section(q.Text), slack.NewActionBlock("",
			button(actionAllow, approvalID, chat.LabelAllow, slack.StylePrimary),
			button(actionDeny, approvalID, chat.LabelDeny, slack.StyleDanger))))
	return ts, err
}

// Offer posts text with an Open pull request button whose value is the workspace.
func (w wire) Offer(ctx context.Context, place core.ChatPlace, text, workspaceID string) (string, error) {
	_, ts, err := w.api.PostMessageContext(ctx, place.ChannelID, slack.MsgOptionTS(place.ThreadID),
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(section(text), slack.NewActionBlock("",
			button(actionPullRequest, workspaceID, chat.LabelPullRequest, slack.StylePrimary))))
	return ts, err
}

// PostFile posts a file in the thread of place (files.getUploadURLExternal, the upload,
// files.completeUploadExternal).
func (w wire) PostFile(ctx context.Context, place core.ChatPlace, name string, body []byte) error {
	_, err := w.api.UploadFileContext(ctx, slack.UploadFileParameters{Filename: name, Title: name,
		Content: string(body), FileSize: len(body), Channel: place.ChannelID, ThreadTimestamp: place.ThreadID})
	return err
}

// Gone reports an edit of a message Slack no longer has (deleted in Slack).
func (wire) Gone(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "cant_update_message")
}

func section(text string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
}

func button(actionID, value, label string, style slack.Style) *slack.ButtonBlockElement {
	btn := slack.NewButtonBlockElement(actionID, value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
	btn.Style = style
	return btn
}
