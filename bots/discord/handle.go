package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// maxThreadName is Discord's limit on a thread's name.
const maxThreadName = 100

// threadAlreadyCreated is Discord's error code for a second thread on one message.
const threadAlreadyCreated = 160004

// HandleEvent handles one stored event (the inbox worker calls it). Errors worth
// retrying (the store or Discord unreachable) are returned; refusals are not errors.
// What the bot says in a thread is returned, not posted: core queues it when it settles
// the event, so a retried event never answers twice.
func (b *Bot) HandleEvent(ctx context.Context, payload []byte) ([]core.ChatNotice, error) {
	var env envelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return nil, nil // not an event we can read; retrying will not help
	}
	self, err := b.self(ctx)
	if err != nil {
		return nil, err
	}
	h := &handling{Bot: b, Handling: chat.Handling{Words: chat.Discord, Self: self, Retryable: retryable, Log: b.log}}
	switch env.Kind {
	case "message":
		var m discordgo.Message
		if err := json.Unmarshal(env.Data, &m); err != nil {
			return nil, nil
		}
		err = h.onMessage(ctx, &m)
	case "interaction":
		var i discordgo.Interaction
		if err := json.Unmarshal(env.Data, &i); err != nil {
			return nil, nil
		}
		err = h.onCommand(ctx, &i)
	}
	return h.Said, err
}

// handling is one event being handled: the bot, and (chat.Handling) who it is and what
// it has to say, in a thread or, when a place has no ThreadID, in the channel.
type handling struct {
	*Bot
	chat.Handling
}

func (h *handling) onMessage(ctx context.Context, m *discordgo.Message) error {
	if m.Author == nil || m.Author.Bot || m.Author.ID == h.Self || m.GuildID == "" {
		return nil
	}
	mentioned := false
	for _, u := range m.Mentions {
		mentioned = mentioned || u.ID == h.Self
	}
	var roles []string
	if m.Member != nil {
		roles = m.Member.Roles
	}
	text := stripMention(m.Content, h.Self)

	// A thread with a workspace: the message is for it (mentions, or every message
	// after `follow all`).
	sess, err := h.svc.ChatSessionForThread(ctx, core.ChatPlace{Platform: core.PlatformDiscord, TeamID: m.GuildID, ThreadID: m.ChannelID})
	if err == nil {
		if !mentioned && !sess.Thread.FollowAll {
			return nil
		}
		if err := sess.Permits(roles); err != nil {
			if !mentioned {
				return nil
			}
			return h.Refuse(sess.Place, err)
		}
		if mentioned {
			if handled, err := h.Command(ctx, h.svc, sess, text); handled {
				return err
			}
		}
		return h.send(ctx, sess, m, text)
	}
	if !mentioned || !isCode(err, core.CodeChatNoWorkspace) {
		if mentioned && retryable(err) {
			return err
		}
		return nil
	}

	// A mention outside a workspace thread: in a channel (a thread is started on the
	// message) or in a thread someone else started (the workspace lives in it).
	info, err := h.channel(ctx, m.ChannelID)
	if err != nil {
		return err // Discord unreachable: the inbox retries
	}
	place := core.ChatPlace{Platform: core.PlatformDiscord, TeamID: m.GuildID, ChannelID: m.ChannelID}
	if info.isThread {
		place.ChannelID, place.ThreadID = info.parent, m.ChannelID
	}
	if sess, err = h.svc.ChatSessionFor(ctx, place); err != nil {
		return h.Refuse(place, err)
	}
	if err := sess.Permits(roles); err != nil {
		return h.Refuse(place, err)
	}
	if handled, err := h.Command(ctx, h.svc, sess, text); handled {
		return err
	}
	if text == "" && len(m.Attachments) == 0 {
		h.Say(place, chat.Discord.Help(h.Self))
		return nil
	}
	if !info.isThread {
		thread, err := h.startThread(ctx, m.ChannelID, m.ID, text)
		if err != nil {
			return h.Refuse(place, err)
		}
		sess.Place.ThreadID = thread
	}
	return h.send(ctx, sess, m, text)
}

// send makes the message a workspace's (starting it when the thread has none), with
// its attachments.
func (h *handling) send(ctx context.Context, sess *core.ChatSession, m *discordgo.Message, text string) error {
	in := core.ChatInput{Key: "discord:" + m.GuildID + ":message:" + m.ID, Text: text}
	if m.Author != nil {
		in.UserID, in.UserName = m.Author.ID, personName(m.Member, m.Author)
	}
	_, err := h.Take(ctx, h.svc, sess, in, len(m.Attachments), func(ctx context.Context) ([]core.ChatFile, error) {
		return h.download(ctx, m.Attachments)
	})
	return err
}

// startThread opens a public thread on the message, named after the prompt's first
// line, and joins it. A thread started from a message has the message's id, so a
// retried event finds the thread its first attempt made.
func (h *handling) startThread(ctx context.Context, channelID, messageID, prompt string) (string, error) {
	ch, err := h.s.MessageThreadStartComplex(channelID, messageID, &discordgo.ThreadStart{
		Name: threadName(prompt), AutoArchiveDuration: 1440,
	}, discordgo.WithContext(ctx))
	id := messageID
	switch {
	case err == nil:
		id = ch.ID
	case apiCode(err) == threadAlreadyCreated:
	default:
		return "", fmt.Errorf("discord: start thread: %w", err)
	}
	h.channels.Store(id, channelInfo{parent: channelID, isThread: true})
	if err := h.s.ThreadJoin(id, discordgo.WithContext(ctx)); err != nil {
		h.log.Info("discord: thread not joined", "thread", id, "err", err)
	}
	return id, nil
}

// threadName is the prompt's first line, at most maxThreadName characters.
func threadName(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "workspace"
	}
	if utf8.RuneCountInString(line) > maxThreadName {
		line = string([]rune(line)[:maxThreadName-1]) + "…"
	}
	return line
}

var mentionRE = regexp.MustCompile(`<@!?(\d+)>`)

// stripMention removes the bot's mentions (and only the bot's) and trims the rest.
func stripMention(text, self string) string {
	text = mentionRE.ReplaceAllStringFunc(text, func(m string) string {
		if mentionRE.FindStringSubmatch(m)[1] == self {
			return ""
		}
		return m
	})
	return strings.TrimSpace(text)
}

// download fetches the message's attachments. One over the size limit is refused
// before anything is downloaded.
func (h *handling) download(ctx context.Context, atts []*discordgo.MessageAttachment) ([]core.ChatFile, error) {
	for _, a := range atts {
		if a.Size > core.MaxAssetBytes {
			return nil, core.Errorf(core.CodeInvalidAssetSize, "file %s is over 20 MiB", a.Filename)
		}
	}
	out := make([]core.ChatFile, 0, len(atts))
	for _, a := range atts {
		data, err := h.fetch(ctx, a.URL)
		if err != nil {
			return nil, fmt.Errorf("download discord attachment %s: %w", a.ID, err)
		}
		out = append(out, core.ChatFile{ID: a.ID, Name: a.Filename, MimeType: a.ContentType, Data: data})
	}
	return out, nil
}

// fetch GETs an attachment with the bot's HTTP client, reading at most the size limit.
func (h *handling) fetch(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := h.s.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return readLimited(resp.Body, core.MaxAssetBytes)
}

func isCode(err error, code string) bool {
	var ce *core.Error
	return errors.As(err, &ce) && ce.Code == code
}

// retryable: what may pass in core (chat.Retryable) or at Discord (rate limit, 5xx,
// the network).
func retryable(err error) bool { return chat.Retryable(err) || discordTransient(err) }

// personName is how the server shows the person: their nickname there, else their
// global display name, else their username. A message's member carries no user, so
// the user is given apart.
func personName(m *discordgo.Member, u *discordgo.User) string {
	if m != nil && m.Nick != "" {
		return m.Nick
	}
	if u == nil {
		return ""
	}
	return u.DisplayName()
}
