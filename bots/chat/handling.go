package chat

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/wshub/wshub/core"
)

// Handling is one event being handled by a bot: who the bot is, on which platform,
// and what it has to say.
type Handling struct {
	Words Platform
	Self  string // the bot's user id
	// Said is what the bot answers. It is returned rather than posted: core queues it
	// when it settles the event, so a retried event never answers twice.
	Said []core.ChatNotice
	// Retryable reports errors that may pass (core's, and the platform's own): the
	// event goes back to the inbox rather than being answered with a refusal.
	Retryable func(error) bool
	Log       *slog.Logger
}

// Say queues text for place.
func (h *Handling) Say(place core.ChatPlace, text string) {
	h.Said = append(h.Said, core.ChatNotice{Place: place, Kind: core.NoticeText, Text: text})
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
// that may pass (h.Retryable) is returned instead, for the inbox to retry the event;
// an error that is not core's is logged (its details stay in the log).
func (h *Handling) Refuse(place core.ChatPlace, err error) error {
	if h.Retryable(err) {
		return err
	}
	var ce *core.Error
	if !errors.As(err, &ce) {
		h.Log.Error("chat request failed", "channel", place.ChannelID, "err", err)
	}
	h.Say(place, h.Words.Refusal(err))
	return nil
}

// TooManyFiles says so in place when a message carries n files, more than a message
// may (core.MaxAttachments): none of them is taken.
func (h *Handling) TooManyFiles(place core.ChatPlace, n int) bool {
	if n <= core.MaxAttachments {
		return false
	}
	h.Say(place, fmt.Sprintf("A message can carry at most %d files; this one has %d. Send them in smaller groups.", core.MaxAttachments, n))
	return true
}
