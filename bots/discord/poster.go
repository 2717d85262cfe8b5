package discord

import (
	"context"
	"errors"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/core"
)

// Discord's side of posting (chat.Wire): bots/chat's Poster decides what to post and
// in how many parts; wire makes the REST calls and reads their errors. A 429 returns
// Discord's retry_after; 5xx and network errors are retried with backoff; errors a
// retry cannot fix (unknown channel, missing access, a locked thread) are permanent.
// Nothing a post says pings anyone: mentions are not allowed. Posting in an archived
// thread unarchives it.

// maxPostChars is Discord's limit on a message's content.
const maxPostChars = 2000

// wire is Discord's REST API as chat.Poster uses it.
type wire struct{ s *discordgo.Session }

// Post posts text in the thread of place or, before a thread exists, in its channel.
func (w wire) Post(ctx context.Context, place core.ChatPlace, text string) error {
	_, err := w.s.ChannelMessageSendComplex(threadOf(place), &discordgo.MessageSend{
		Content: text, AllowedMentions: &discordgo.MessageAllowedMentions{},
	}, discordgo.WithContext(ctx))
	return err
}

// Failed reads a REST error: a rate limit's retry_after, or whether it is permanent.
func (wire) Failed(err error) (time.Duration, bool) {
	var rl *discordgo.RateLimitError
	if errors.As(err, &rl) {
		return rl.RetryAfter, false
	}
	return 0, permanent(err)
}

// threadOf is where a post goes: its thread, else its channel.
func threadOf(p core.ChatPlace) string {
	if p.ThreadID == "" {
		return p.ChannelID
	}
	return p.ThreadID
}
