package slack

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/slack-go/slack"

	"github.com/wshub/wshub/bots/chat"

	"github.com/wshub/wshub/core"
)

var _ core.ChatPoster = (*Bot)(nil)

// maxPostChars bounds the text of one post, in runes. Slack recommends keeping message
// text under 4,000 characters; clients cut or split longer text on their own.
const maxPostChars = 3900

// PostReply posts a finished turn in its thread: the reply split to Slack's size, the
// outcome and truncation shown. Parts already posted by an earlier attempt are not
// posted again. A 429 returns Slack's Retry-After; 5xx and network errors are retried
// with backoff; errors that cannot pass (channel gone, bot removed, token revoked)
// are permanent.
func (b *Bot) PostReply(ctx context.Context, r core.ChatReply) core.ChatPostResult {
	parts := chat.Slack.FormatReply(chat.Reply{
		Text: r.Text, Outcome: string(r.Outcome), Truncated: r.Truncated, FailureCode: r.FailureCode,
		FailureMessage: r.FailureMessage, Agent: chat.AgentName(r.Agent),
	}, maxPostChars)
	return b.postParts(ctx, r.Place, parts, r.PartsPosted)
}

// PostNotice posts what the hub says in a thread: a command's answer or refusal as the
// handler worded it, or a workspace failure worded here. Errors are treated as for
// replies.
func (b *Bot) PostNotice(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	switch n.Kind {
	case core.NoticeApproval:
		return b.postApproval(ctx, n)
	case core.NoticeApprovalDecided:
		return b.postDecided(ctx, n)
	}
	text := n.Text
	if n.Kind == core.NoticeWorkspaceFailed {
		text = chat.Slack.FailureNotice(n.WorkspaceID, n.Code)
	}
	return b.postParts(ctx, n.Place, chat.Split(text, maxPostChars), n.PartsPosted)
}

// postParts posts parts[from:] in the thread of place, in order, stopping at the first
// error.
func (b *Bot) postParts(ctx context.Context, place core.ChatPlace, parts []string, from int) core.ChatPostResult {
	return chat.PostParts(parts, from, func(part string) error {
		_, _, err := b.api.PostMessageContext(ctx, place.ChannelID, slack.MsgOptionText(part, false),
			slack.MsgOptionTS(place.ThreadID))
		return err
	}, func(err error) (time.Duration, bool) {
		var rl *slack.RateLimitedError
		if errors.As(err, &rl) {
			return rl.RetryAfter, false
		}
		return 0, permanent(err)
	})
}

// permanentErrors are Slack API errors that a retry cannot fix.
var permanentErrors = map[string]bool{
	"channel_not_found": true, "not_in_channel": true, "is_archived": true, "account_inactive": true,
	"invalid_auth": true, "not_authed": true, "token_revoked": true, "token_expired": true, "missing_scope": true,
	"restricted_action": true, "team_access_not_granted": true, "ekm_access_denied": true, "no_permission": true,
	"thread_not_found": true, "msg_too_long": true, "no_text": true, "invalid_blocks": true,
}

func permanent(err error) bool {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return permanentErrors[se.Err]
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		return sc.Code >= 400 && sc.Code < 500 && sc.Code != 408 && sc.Code != 429
	}
	var ne net.Error
	_ = errors.As(err, &ne) // network errors: retried
	return false
}
