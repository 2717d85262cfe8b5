package slack

import (
	"context"
	"errors"
	"strings"

	"github.com/slack-go/slack"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Turn status messages and approval messages (issue 16), as Block Kit messages: a
// section with the words and, while there is something to press, an actions block.
// The text field carries the same words (notifications, clients without blocks).

// Action ids of the bot's buttons; each button's value is the turn or approval id.
const (
	actionStop  = "wshub_stop"
	actionAllow = "wshub_allow"
	actionDeny  = "wshub_deny"
)

var _ core.ChatStatusPoster = (*Bot)(nil)

// PostStatus posts a turn's status in its thread, or edits it in place (chat.update)
// once posted. A running turn's status has a Stop button; a finished one none. An
// edit of a message that is gone (deleted in Slack) posts a new one.
func (b *Bot) PostStatus(ctx context.Context, v core.ChatStatusView) (string, core.ChatPostResult) {
	text := chat.Slack.StatusText(v)
	blocks := []slack.Block{section(text)}
	if !v.Finished {
		blocks = append(blocks, slack.NewActionBlock("", button(actionStop, v.TurnID, chat.LabelStop, slack.StyleDanger)))
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if v.MessageRef != "" {
		_, _, _, err := b.api.UpdateMessageContext(ctx, v.Place.ChannelID, v.MessageRef, opts...)
		if !isGone(err) {
			return v.MessageRef, b.result(err)
		}
	}
	_, ts, err := b.api.PostMessageContext(ctx, v.Place.ChannelID, append(opts, slack.MsgOptionTS(v.Place.ThreadID))...)
	return ts, b.result(err)
}

// postApproval asks the thread for a decision, with Allow and Deny buttons.
func (b *Bot) postApproval(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	if n.PartsPosted > 0 {
		return core.ChatPostResult{PartsPosted: n.PartsPosted, Done: true}
	}
	text := chat.Slack.ApprovalText(n.Tool, n.Summary)
	// Allow only under a question that shows what it allows whole.
	var buttons []slack.BlockElement
	if chat.ApprovalShownWhole(n.Summary) {
		buttons = append(buttons, button(actionAllow, n.ApprovalID, chat.LabelAllow, slack.StylePrimary))
	}
	buttons = append(buttons, button(actionDeny, n.ApprovalID, chat.LabelDeny, slack.StyleDanger))
	_, ts, err := b.api.PostMessageContext(ctx, n.Place.ChannelID, slack.MsgOptionTS(n.Place.ThreadID),
		slack.MsgOptionText(text, false), slack.MsgOptionBlocks(section(text), slack.NewActionBlock("", buttons...)))
	res := b.result(err)
	if res.Done {
		res.PartsPosted, res.Ref = 1, ts
	}
	return res
}

// postDecided edits an approval's message to say how it was decided, without buttons
// (a decision taken anywhere: every thread shows it).
func (b *Bot) postDecided(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	text := decidedText(chat.Slack.ApprovalText(n.Tool, n.Summary), n.Status, n.DecidedBy)
	_, _, _, err := b.api.UpdateMessageContext(ctx, n.Place.ChannelID, n.MessageRef, slack.MsgOptionText(text, false),
		slack.MsgOptionBlocks(section(text)))
	if isGone(err) {
		err = nil // deleted in Slack: nothing left to edit
	}
	res := b.result(err)
	if res.Done {
		res.PartsPosted = 1
	}
	return res
}

// decidedText is an approval's question with how it was decided under it.
func decidedText(question string, status core.ApprovalStatus, by string) string {
	who := chat.DecidedBy(by, core.PlatformSlack, func(id string) string { return "<@" + id + ">" })
	return strings.TrimSpace(question) + "\n" + chat.Slack.DecisionLine(status, who)
}

func section(text string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
}

func button(actionID, value, label string, style slack.Style) *slack.ButtonBlockElement {
	btn := slack.NewButtonBlockElement(actionID, value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false))
	btn.Style = style
	return btn
}

// result judges one Web API call as a post: done, or why not (as postParts does).
func (b *Bot) result(err error) core.ChatPostResult {
	if err == nil {
		return core.ChatPostResult{Done: true}
	}
	res := core.ChatPostResult{Error: err.Error()}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		res.RetryAfter = rl.RetryAfter
	} else {
		res.Permanent = permanent(err)
	}
	return res
}

// isGone reports an edit of a message Slack no longer has.
func isGone(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && (se.Err == "message_not_found" || se.Err == "cant_update_message")
}
