// Package slack is wshub's Slack front-end: it turns Slack events (Events API over
// HTTP, or Socket Mode) into core use cases, and posts turn replies into threads.
// It calls core only.
package slack

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/slack-go/slack"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Config is the bot's credentials (README: Slack).
type Config struct {
	BotToken      string // xoxb-...: Web API calls, file downloads
	SigningSecret string // verifies Events API requests over HTTP
	AppToken      string // xapp-...: Socket Mode, for hubs without a public address
	// APIURL replaces https://slack.com/api/ (tests point it at slacktest).
	APIURL string
}

// Bot is one Slack app installation's front-end. It posts through chat.Poster, over
// Slack's wire (poster.go, status.go).
type Bot struct {
	chat.Poster
	svc    *core.Chat
	api    *slack.Client
	cfg    Config
	log    *slog.Logger
	mu     sync.Mutex
	selfID string // the bot's user id, learnt with auth.test
	names  names
}

// New builds the bot; it makes no call to Slack until it is used.
func New(svc *core.Chat, cfg Config, log *slog.Logger) *Bot {
	if log == nil {
		log = slog.Default()
	}
	opts := []slack.Option{}
	if cfg.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.APIURL))
	}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	api := slack.New(cfg.BotToken, opts...)
	return &Bot{Poster: chat.Poster{Words: chat.Slack, Wire: wire{api}, MaxPost: maxPostChars, MaxQuestion: maxQuestionChars},
		svc: svc, api: api, cfg: cfg, log: log.With("bot", "slack")}
}

// self returns the bot's user id (to strip its mention and ignore its own messages).
func (b *Bot) self(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.selfID != "" {
		return b.selfID, nil
	}
	r, err := b.api.AuthTestContext(ctx)
	if err != nil {
		return "", fmt.Errorf("slack auth.test: %w", err)
	}
	b.selfID = r.UserID
	return b.selfID, nil
}
