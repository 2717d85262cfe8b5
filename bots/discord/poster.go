package discord

import (
	"context"
	"errors"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

var _ core.ChatPoster = (*Bot)(nil)

// maxPostChars is Discord's limit on a message's content.
const maxPostChars = 2000

// PostReply posts a finished turn in its thread: the reply split under Discord's size
// without breaking code blocks, the outcome and truncation shown. Parts an earlier
// attempt posted are not posted again. A 429 returns Discord's retry_after; 5xx and
// network errors are retried with backoff; errors a retry cannot fix (unknown channel,
// missing access, a locked thread) are permanent. Posting in an archived thread
// unarchives it.
func (b *Bot) PostReply(ctx context.Context, r core.ChatReply) core.ChatPostResult {
	parts := words.FormatReply(chat.Reply{
		Text: r.Text, Outcome: string(r.Outcome), Truncated: r.Truncated, FailureCode: r.FailureCode,
		FailureMessage: r.FailureMessage, Agent: chat.AgentName(r.Agent),
	}, maxPostChars)
	return b.postParts(ctx, r.Place, parts, r.PartsPosted)
}

// PostNotice posts what the hub says in a thread (or, before a thread exists, in the
// channel): a command's answer or refusal as the handler worded it, or a workspace
// failure worded here.
func (b *Bot) PostNotice(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	switch n.Kind {
	case core.NoticeApproval:
		return b.postApproval(ctx, n)
	case core.NoticeApprovalDecided:
		return b.postDecided(ctx, n)
	}
	text := n.Text
	if n.Kind == core.NoticeWorkspaceFailed {
		text = words.FailureNotice(n.WorkspaceID, n.Code)
	}
	return b.postParts(ctx, n.Place, chat.Split(text, maxPostChars), n.PartsPosted)
}

// postParts posts parts[from:] in order, stopping at the first error. Nothing a post
// says pings anyone: mentions are not allowed.
func (b *Bot) postParts(ctx context.Context, place core.ChatPlace, parts []string, from int) core.ChatPostResult {
	target := place.ThreadID
	if target == "" {
		target = place.ChannelID
	}
	return chat.PostParts(parts, from, func(part string) error {
		_, err := b.s.ChannelMessageSendComplex(target, &discordgo.MessageSend{
			Content: part, AllowedMentions: &discordgo.MessageAllowedMentions{},
		}, discordgo.WithContext(ctx))
		return err
	}, func(err error) (time.Duration, bool) {
		var rl *discordgo.RateLimitError
		if errors.As(err, &rl) {
			return rl.RetryAfter, false
		}
		return 0, permanent(err)
	})
}
