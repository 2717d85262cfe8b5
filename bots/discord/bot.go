// Package discord is wshub's Discord front-end: a gateway session (discordgo) and the
// HTTP interactions endpoint turn mentions and the /workspace command into core use
// cases, and turn replies are posted back into the thread. Discord's wire format lives
// here; what both bots share (words, commands, reply formatting, posting) is in
// bots/chat. It calls core only.
package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Config is the bot's credentials (README: Discord).
type Config struct {
	BotToken string // the bot user's token: gateway and REST calls
	// PublicKey is the application's Ed25519 public key (hex), which verifies requests
	// to POST /discord/interactions; without it the endpoint refuses everything.
	PublicKey string
	AppID     string // the application id (slash command registration)
	// HTTPClient replaces the client the bot reaches Discord with: its REST calls and
	// the gateway discovery (tests point its transport at a local fake Discord).
	HTTPClient *http.Client
	// Clock reads the time interactions' timestamps are checked against (nil: the
	// system clock).
	Clock core.Clock
}

// Bot is one Discord application's front-end. It posts through chat.Poster, over
// Discord's wire (poster.go, status.go).
type Bot struct {
	chat.Poster
	svc *core.Chat
	s   *discordgo.Session
	cfg Config
	pub ed25519.PublicKey
	log *slog.Logger

	mu     sync.Mutex
	selfID string
	// channels caches what the bot learnt of channels: whether each is a thread, and
	// its parent (a thread's messages do not say).
	channels sync.Map // channel id -> channelInfo
}

type channelInfo struct {
	parent   string
	isThread bool
}

// New builds the bot; it connects to nothing until Run.
func New(svc *core.Chat, cfg Config, log *slog.Logger) (*Bot, error) {
	if log == nil {
		log = slog.Default()
	}
	s, err := discordgo.New("Bot " + cfg.BotToken)
	if err != nil {
		return nil, fmt.Errorf("discord session: %w", err)
	}
	s.Identify.Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsMessageContent
	if cfg.HTTPClient != nil {
		s.Client = cfg.HTTPClient
	}
	// 429s come back as errors with Discord's retry_after: the outbox waits them out
	// under its own retry budget instead of a goroutine sleeping inside discordgo.
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 1
	s.LogLevel = discordgo.LogError
	if cfg.Clock == nil {
		cfg.Clock = core.SystemClock{}
	}
	b := &Bot{Poster: chat.Poster{Words: chat.Discord, Wire: wire{s}, MaxPost: maxPostChars, MaxQuestion: maxQuestionChars},
		svc: svc, s: s, cfg: cfg, log: log.With("bot", "discord")}
	if cfg.PublicKey != "" {
		k, err := hex.DecodeString(cfg.PublicKey)
		if err != nil || len(k) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("WSHUB_DISCORD_PUBLIC_KEY: expected %d bytes in hex", ed25519.PublicKeySize)
		}
		b.pub = k
	}
	s.AddHandler(b.onGatewayEvent)
	return b, nil
}

// Run connects to the gateway and stays connected until ctx ends. discordgo reconnects
// a session that drops by itself; a first connection that fails is tried again with
// backoff.
func (b *Bot) Run(ctx context.Context) error {
	delay := time.Second
	for {
		err := b.s.Open()
		if err == nil {
			break
		}
		b.log.Warn("discord gateway: connect failed; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Minute)
	}
	if b.cfg.AppID != "" {
		b.registerCommand(ctx)
	}
	<-ctx.Done()
	return b.s.Close()
}

// registerCommand creates (or, by name, replaces) the global /workspace command.
// Failing is logged, not fatal: mentions work without it.
func (b *Bot) registerCommand(ctx context.Context) {
	agents := make([]*discordgo.ApplicationCommandOptionChoice, 0, len(core.AgentIDs))
	for _, id := range core.AgentIDs {
		agents = append(agents, &discordgo.ApplicationCommandOptionChoice{Name: chat.AgentName(id), Value: id})
	}
	// Guilds only: the command starts threads, which a direct message has none of.
	guildOnly := []discordgo.InteractionContextType{discordgo.InteractionContextGuild}
	_, err := b.s.ApplicationCommandCreate(b.cfg.AppID, "", &discordgo.ApplicationCommand{
		Name: commandName, Description: "Start a coding workspace in a new thread, or message this thread's workspace",
		Contexts: &guildOnly,
		Options: []*discordgo.ApplicationCommandOption{
			{Type: discordgo.ApplicationCommandOptionString, Name: "prompt", Description: "What the agent should do", Required: true, MaxLength: 6000},
			{Type: discordgo.ApplicationCommandOptionString, Name: "project", Description: "Project name or id (default: the channel's)"},
			{Type: discordgo.ApplicationCommandOptionString, Name: "agent", Description: "Coding agent (default: the server's)", Choices: agents},
			{Type: discordgo.ApplicationCommandOptionString, Name: "model", Description: "Model (with agent)", MaxLength: core.MaxModelChars},
		},
	}, discordgo.WithContext(ctx))
	if err != nil {
		b.log.Warn("discord: /workspace not registered", "err", err)
	}
}

// self returns the bot's user id: from READY, or asked of the API.
func (b *Bot) self(ctx context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.selfID != "" {
		return b.selfID, nil
	}
	if st := b.s.State; st != nil && st.User != nil && st.User.ID != "" {
		b.selfID = st.User.ID
		return b.selfID, nil
	}
	u, err := b.s.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("discord users/@me: %w", err)
	}
	b.selfID = u.ID
	return b.selfID, nil
}

// channel says whether id is a thread and, if so, its parent.
func (b *Bot) channel(ctx context.Context, id string) (channelInfo, error) {
	if v, ok := b.channels.Load(id); ok {
		return v.(channelInfo), nil
	}
	ch, err := b.s.State.Channel(id)
	if err != nil {
		if ch, err = b.s.Channel(id, discordgo.WithContext(ctx)); err != nil {
			return channelInfo{}, fmt.Errorf("discord channel %s: %w", id, err)
		}
	}
	info := channelInfo{parent: ch.ParentID, isThread: ch.IsThread()}
	b.channels.Store(id, info)
	return info, nil
}
