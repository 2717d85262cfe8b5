package slack

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/slack-go/slack"

	"github.com/wshub/wshub/core"
)

// Slack's side of posting (chat.Wire): bots/chat's Poster decides what to post and in
// how many parts; wire makes the Web API calls and reads their errors. A 429 returns
// Slack's Retry-After; 5xx and network errors are retried with backoff; errors that
// cannot pass (channel gone, bot removed, token revoked) are permanent.

// maxPostChars bounds the text of one post, in runes. Slack recommends keeping message
// text under 4,000 characters; clients cut or split longer text on their own.
const maxPostChars = 3900

// wire is Slack's Web API as chat.Poster uses it.
type wire struct{ api *slack.Client }

// Post posts text in the thread of place (chat.postMessage).
func (w wire) Post(ctx context.Context, place core.ChatPlace, text string) error {
	_, _, err := w.api.PostMessageContext(ctx, place.ChannelID, slack.MsgOptionText(text, false),
		slack.MsgOptionTS(place.ThreadID))
	return err
}

// Failed reads a Web API error: a rate limit's Retry-After, or whether it is permanent.
func (wire) Failed(err error) (time.Duration, bool) {
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter, false
	}
	return 0, permanent(err)
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
