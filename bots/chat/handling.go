package chat

import (
	"errors"
	"log/slog"
	"time"

	"github.com/wshub/wshub/core"
)

// Said collects what a bot answers while it handles one event. The bot returns it
// rather than posting it: core queues it when it settles the event, so a retried
// event never answers twice.
type Said []core.ChatNotice

// Say queues text for place.
func (s *Said) Say(place core.ChatPlace, text string) {
	*s = append(*s, core.ChatNotice{Place: place, Kind: core.NoticeText, Text: text})
}

// Retryable reports core errors that may pass (the store away, a busy row): the event
// goes back to the inbox instead of being answered with a refusal.
func Retryable(err error) bool {
	var ce *core.Error
	if errors.As(err, &ce) {
		switch ce.Code {
		case core.CodeServiceUnavailable, core.CodeWorkspaceStateContended, core.CodeAssetStoreUnavailable:
			return true
		}
		return false
	}
	return errors.Is(err, core.ErrUnavailable) || errors.Is(err, core.ErrContended)
}

// Refuse tells place why a request was refused, in the platform's words. An error
// that may pass (retryable) is returned instead, for the inbox to retry the event; an
// error that is not core's is logged (its details stay in the log).
func (p Platform) Refuse(said *Said, place core.ChatPlace, err error, retryable func(error) bool, log *slog.Logger) error {
	if retryable(err) {
		return err
	}
	var ce *core.Error
	if !errors.As(err, &ce) {
		log.Error("chat request failed", "channel", place.ChannelID, "err", err)
	}
	said.Say(place, p.Refusal(err))
	return nil
}

// PostParts posts parts[from:] in order with post, stopping at the first error, which
// classify reads: a platform's wait (rate limit) or a failure no retry can fix.
func PostParts(parts []string, from int, post func(part string) error,
	classify func(error) (retryAfter time.Duration, permanent bool)) core.ChatPostResult {
	for i := from; i < len(parts); i++ {
		if err := post(parts[i]); err != nil {
			res := core.ChatPostResult{PartsPosted: i, Error: err.Error()}
			res.RetryAfter, res.Permanent = classify(err)
			return res
		}
	}
	return core.ChatPostResult{PartsPosted: len(parts), Done: true}
}
