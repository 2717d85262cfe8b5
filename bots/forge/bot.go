// Package forge is the forges' front-end (GitHub, GitLab, Gitea): their webhook
// deliveries in, verified by each project's secret and kept in the chat inbox, an
// issue comment that names the project's handle made a workspace's message, and what
// the hub says in an issue shown as one comment it edits as the work goes. It calls
// core only; the forges' API calls are core's, through the project's credential.
package forge

import (
	"log/slog"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// MaxBodyBytes bounds a delivery's body. Forges cap an issue's or a comment's text at
// about 64 KiB (GitHub) and send the issue with the comment, so a real delivery is far
// below a mebibyte; a larger one is refused before it is read.
const MaxBodyBytes = 1 << 20

// maxPostChars bounds the text of the hub's comment, in runes: GitHub refuses a
// comment over 65,536 characters, the strictest of the three.
const maxPostChars = 60_000

// Bot is the forges' front-end.
type Bot struct {
	forge    *core.ForgeEvents
	chat     *core.Chat
	log      *slog.Logger
	counters Counters
}

// Counters count the deliveries answered and ignored, by forge kind: for a repository
// no project takes events from, and from a GitHub App installation no account has.
type Counters struct {
	UnknownRepository, UnknownInstallation func(kind string)
}

// New builds the forges' front-end on core's forge and chat use cases; the counters
// set count the deliveries it ignores.
func New(forge *core.ForgeEvents, c *core.Chat, log *slog.Logger, counters Counters) *Bot {
	if log == nil {
		log = slog.Default()
	}
	if counters.UnknownRepository == nil {
		counters.UnknownRepository = func(string) {}
	}
	if counters.UnknownInstallation == nil {
		counters.UnknownInstallation = func(string) {}
	}
	return &Bot{forge: forge, chat: c, log: log, counters: counters}
}

// words are a forge's words: Markdown, as the three forges render it.
func words(kind string) chat.Platform {
	return chat.Platform{Name: kind, Team: "project", Bind: "wshub admin project update --forge-webhook-secret-file <file>",
		Warning: "⚠️", Cross: "❌", Working: "⏳", Done: "✅", Stopped: "⏹️", Lock: "🔒",
		EscapeLabel: chat.EscapeDiscordMarkdown,
		Markup:      chat.Markup{Strong: "**", Em: "*", Literal: chat.EscapeDiscordMarkdown},
		RepliesGo:   "here", Followed: "comment", Starts: "in an issue's comment starts a workspace on it."}
}
