package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/slack-go/slack"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// HandleEvent handles one stored event callback (the inbox worker calls it). Errors
// worth retrying (the store or Slack unreachable) are returned; refusals are not
// errors. What the bot answers in the thread is returned, not posted: core queues it
// when it settles the event, so a retried event never answers twice.
func (b *Bot) HandleEvent(ctx context.Context, payload []byte) ([]core.ChatNotice, error) {
	var cb callback
	if err := json.Unmarshal(payload, &cb); err != nil {
		return nil, nil // not an event we can read; retrying will not help
	}
	e := cb.Event
	self, err := b.self(ctx)
	if err != nil {
		return nil, err
	}
	if e.BotID != "" || e.User == "" || e.User == self {
		return nil, nil // bots, including this one, do not drive workspaces
	}
	h := &handling{Bot: b, Handling: chat.Handling{Words: chat.Slack, Self: self, Retryable: retryable, Log: b.log}}
	switch e.Type {
	case "app_mention":
		err = h.onMessage(ctx, cb, true)
	case "message":
		// Only thread replies matter without a mention (threads in "follow all"); a
		// message that mentions the bot arrives as app_mention too and is handled there.
		if e.ThreadTS == "" || (e.SubType != "" && e.SubType != "file_share" && e.SubType != "thread_broadcast") ||
			strings.Contains(e.Text, "<@"+self+">") {
			return nil, nil
		}
		err = h.onMessage(ctx, cb, false)
	}
	return h.Said, err
}

// handling is one event being handled: the bot, and (chat.Handling) who it is and what
// it has to say in the thread.
type handling struct {
	*Bot
	chat.Handling
}

func (h *handling) onMessage(ctx context.Context, cb callback, mentioned bool) error {
	b, self := h.Bot, h.Self
	e := cb.Event
	place := core.ChatPlace{Platform: core.PlatformSlack, TeamID: cb.TeamID, ChannelID: e.Channel, ThreadID: e.thread()}
	sess, err := b.svc.ChatSessionFor(ctx, place)
	if err != nil {
		if !mentioned {
			return nil
		}
		return h.Refuse(place, err)
	}
	if !mentioned && (sess.Thread == nil || !sess.Thread.FollowAll) {
		return nil
	}
	if err := sess.Permits(nil); err != nil { // the binding's channel list
		if !mentioned {
			return nil
		}
		return h.Refuse(place, err)
	}
	text := stripMention(e.Text, self)
	if mentioned {
		if handled, err := h.Command(ctx, b.svc, sess, text); handled {
			return err
		}
	}
	if text == "" && len(e.Files) == 0 {
		h.Say(place, chat.Slack.Help(self))
		return nil
	}
	in := core.ChatInput{Key: "slack:" + cb.TeamID + ":" + e.Channel + ":" + e.TS, Text: text,
		UserID: e.User, UserName: b.userName(ctx, e.User)}
	taken, err := h.Take(ctx, b.svc, sess, in, len(e.Files), func(ctx context.Context) ([]core.ChatFile, error) {
		return b.download(ctx, e.Files)
	})
	if taken {
		b.react(ctx, e.Channel, e.TS)
	}
	return err
}

var mentionRE = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// stripMention removes the bot's mention (and only the bot's) and trims the rest.
func stripMention(text, self string) string {
	text = mentionRE.ReplaceAllStringFunc(text, func(m string) string {
		if strings.HasPrefix(m, "<@"+self+">") || strings.HasPrefix(m, "<@"+self+"|") {
			return ""
		}
		return m
	})
	return strings.TrimSpace(text)
}

// download fetches the message's files with the bot token. A file over the size limit
// is refused before anything is downloaded.
func (b *Bot) download(ctx context.Context, files []file) ([]core.ChatFile, error) {
	for _, f := range files {
		if f.Size > core.MaxAssetBytes {
			return nil, core.Errorf(core.CodeInvalidAssetSize, "file %s is over 20 MiB", f.Name)
		}
	}
	out := make([]core.ChatFile, 0, len(files))
	for _, f := range files {
		var buf bytes.Buffer
		if err := b.api.GetFileContext(ctx, f.DownloadURL, &buf); err != nil {
			return nil, fmt.Errorf("download slack file %s: %w", f.ID, err)
		}
		out = append(out, core.ChatFile{ID: f.ID, Name: f.Name, MimeType: f.Mimetype, Data: buf.Bytes()})
	}
	return out, nil
}

// react marks a message as taken; failing to is not worth a retry.
func (b *Bot) react(ctx context.Context, channel, ts string) {
	err := b.api.AddReactionContext(ctx, "eyes", slack.NewRefToMessage(channel, ts))
	var se slack.SlackErrorResponse
	if err != nil && !(errors.As(err, &se) && se.Err == "already_reacted") {
		b.log.Info("slack: reaction not added", "channel", channel, "err", err)
	}
}

// retryable: what may pass in core (chat.Retryable) or at Slack (a rate limit, a 5xx,
// the network): the inbox tries the event again rather than refusing it.
func retryable(err error) bool {
	var ce *core.Error
	if chat.Retryable(err) {
		return true
	}
	if errors.As(err, &ce) {
		return false
	}
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var ne net.Error
	switch {
	case errors.As(err, &rl), errors.As(err, &ne):
		return true
	case errors.As(err, &sc):
		return !permanent(err)
	}
	return false
}
