package forge

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Poster is kind's poster (core.ChatPoster and core.ChatStatusPoster): whatever the
// hub says in an issue, a turn's status, its reply, a refusal, becomes the one
// comment of the hub's there, edited in place.
func (b *Bot) Poster(kind string) core.ChatPoster {
	return poster{Poster: chat.Poster{Words: words(kind), Wire: wire{forge: b.forge}, MaxPost: maxPostChars, MaxQuestion: maxPostChars},
		forge: b.forge, log: b.log}
}

type poster struct {
	chat.Poster
	forge *core.ForgeEvents
	log   *slog.Logger
}

var _ core.ChatStatusPoster = poster{}

// InReviewThread is the hub's one comment in a pull request once a turn's answer went
// in a review's thread, beside the line it was asked on.
const InReviewThread = "Answered in the review thread."

// PostReply shows a finished turn: done, and the reply under it. The answer to a
// review's line comment goes in that comment's thread where the forge has one, and
// the hub's one comment in the pull request then says so.
func (p poster) PostReply(ctx context.Context, r core.ChatReply) core.ChatPostResult {
	if r.Outcome == core.OutcomeCompleted {
		r.Text = p.Words.Done + " Done.\n\n" + r.Text
	}
	if r.PartsPosted > 0 {
		return p.Poster.PostReply(ctx, r)
	}
	answered, err := p.forge.ReplyInReviewThread(ctx, r.Place, r.TurnID, strings.Join(p.ReplyParts(r), "\n\n"))
	if err != nil {
		res := core.ChatPostResult{Error: err.Error()}
		res.RetryAfter, res.Permanent = p.Wire.Failed(err)
		return res
	}
	if !answered {
		return p.Poster.PostReply(ctx, r)
	}
	// The answer is out: the comment's edit only points to it, and is not worth
	// answering twice for.
	mark := p.Words.Done
	if r.Outcome != core.OutcomeCompleted {
		mark = p.Words.Warning
	}
	if err := p.Wire.Post(ctx, r.Place, mark+" "+InReviewThread); err != nil {
		p.log.Warn("forge comment not pointed to the review thread", "forge", r.Place.Platform, "thread", r.Place.ThreadID, "err", err)
	}
	return core.ChatPostResult{PartsPosted: 1, Done: true}
}

// PostStatus shows a running turn's status; a finished turn's is left to its reply,
// which says more (the status and the reply go out through different queues, so the
// reply may be first).
func (p poster) PostStatus(ctx context.Context, v core.ChatStatusView) (string, core.ChatPostResult) {
	if v.Finished && v.Script == "" {
		return v.MessageRef, core.ChatPostResult{Done: true}
	}
	return p.Poster.PostStatus(ctx, v)
}

// wire is the hub's comment as chat.Poster uses it: every post and edit makes it say
// the text given.
type wire struct{ forge *core.ForgeEvents }

func (w wire) Post(ctx context.Context, place core.ChatPlace, text string) error {
	_, err := w.forge.ShowForgeComment(ctx, place, text)
	return err
}

// Show edits the comment; stop names the turn of a running turn's status, which must
// not overwrite the turn's reply once it has finished.
func (w wire) Show(ctx context.Context, place core.ChatPlace, _, text, stop string) (string, error) {
	if stop != "" {
		return w.forge.ShowForgeStatus(ctx, place, stop, text)
	}
	return w.forge.ShowForgeComment(ctx, place, text)
}

// Ask shows an approval's question; it is decided in the app or the API (a comment
// has no buttons).
func (w wire) Ask(ctx context.Context, place core.ChatPlace, _ string, q chat.Question) (string, error) {
	return w.forge.ShowForgeComment(ctx, place, q.Text+"\n\nDecide it in the wshub app.")
}

// Offer says nothing: the offer of a pull request is a button, which a comment cannot
// carry, and shown in the hub's one comment it would replace the reply. The project's
// --pull-requests setting opens one.
func (w wire) Offer(context.Context, core.ChatPlace, string, string) (string, error) {
	return "", nil
}

// Failed: a forge's refusal (no permission, the issue gone) is permanent, but a rate
// limit or a server's error passes.
func (wire) Failed(err error) (time.Duration, bool) {
	var r *core.ForgeRefusal
	if errors.As(err, &r) && r.Status >= 400 && r.Status < 500 {
		return 0, r.Status != http.StatusTooManyRequests && r.Status != http.StatusRequestTimeout
	}
	return 0, false
}

func (wire) Gone(error) bool { return false }
