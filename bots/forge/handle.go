package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/wshub/wshub/bots/chat"
	"github.com/wshub/wshub/core"
)

// Starting is the hub's comment from the moment it takes a request: it is edited
// as the work goes. It never names the handle, so it cannot ask for work itself.
const Starting = "⏳ Starting a workspace for this issue. This comment follows the work."

// NotAllowed is said in an issue when someone who may not write to the repository
// asks for work.
const NotAllowed = "Only people who can write to this repository can ask me for work, so nothing was started."

// Handler is kind's handler of the inbox's events (core.ChatEventHandler).
func (b *Bot) Handler(kind string) core.ChatEventHandler {
	return func(ctx context.Context, payload []byte) ([]core.ChatNotice, error) {
		return b.handle(ctx, kind, payload)
	}
}

// handle makes a person's request a workspace's message: an issue comment that names
// the project's handle (the first one in an issue starts a workspace with the issue
// as context, later ones are its follow-ups), and on a pull request a workspace
// opened, a review's comment or summary, or a comment that names the handle.
// Everything else is ignored, the hub's own comments (and another hub's) and bots'
// first.
func (b *Bot) handle(ctx context.Context, kind string, payload []byte) ([]core.ChatNotice, error) {
	var env core.ForgeEnvelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return nil, fmt.Errorf("forge event envelope: %w", err)
	}
	ev, err := parse(kind, env.Event, env.Body)
	if err == nil && ev.Check != nil && len(ev.Repositories) > 0 {
		return b.failedCheck(ctx, kind, env.ProjectID, ev)
	}
	if err != nil || ev.Bot || strings.Contains(ev.Comment, core.ForgeCommentMark) || len(ev.Repositories) == 0 {
		return nil, nil // not a person's request: nothing to do, and nothing to retry
	}
	place := core.ChatPlace{Platform: kind, TeamID: env.ProjectID, ChannelID: core.RepositoryKey(ev.Repositories[0])}
	switch {
	case ev.NewIssueComment, len(ev.Labeled) > 0 && ev.Issue != 0:
		place.ThreadID = strconv.FormatInt(ev.Issue, 10)
	case ev.Pull != 0:
		place.ThreadID = core.PullThreadID(ev.Pull)
	default:
		return nil, nil
	}
	a, err := b.ask(ctx, place, ev)
	if a == nil {
		return nil, err
	}
	switch {
	case ev.Pull != 0:
		return b.pullComment(ctx, a, ev)
	case len(ev.Labeled) > 0:
		return b.labeled(ctx, a, ev)
	}
	return b.issueComment(ctx, a, ev)
}

// asking is an event being handled in its thread: the bot's handling, the thread's
// session, why the account may not work (said only to someone who asked), and what
// the comment asks by the handle.
type asking struct {
	h       *chat.Handling
	place   core.ChatPlace
	sess    *core.ForgeSession
	refusal error
	prompt  string
	asked   bool
}

// ask resolves the thread's session and reads the request; nil when there is nothing
// to do.
func (b *Bot) ask(ctx context.Context, place core.ChatPlace, ev *event) (*asking, error) {
	sess, err := b.forge.ForgeSessionFor(ctx, place)
	if sess == nil { // the project takes no events any more, or the store is away
		if chat.Retryable(err) {
			return nil, err
		}
		b.log.Info("forge event for a project without events", "forge", place.Platform, "project", place.TeamID, "err", err)
		return nil, nil
	}
	a := &asking{h: &chat.Handling{Words: words(place.Platform), Retryable: chat.Retryable, Log: b.log},
		place: place, sess: sess, refusal: err}
	a.prompt, a.asked = request(ev.Comment, sess.Handle)
	return a, nil
}

// issueComment takes an issue comment that names the handle.
func (b *Bot) issueComment(ctx context.Context, a *asking, ev *event) ([]core.ChatNotice, error) {
	if !a.asked {
		return nil, nil
	}
	return b.takeInIssue(ctx, a, ev, ev.key(a.place), a.prompt)
}

// labeled starts a workspace on an issue given the project's trigger label, with
// the issue as the prompt: once per issue, so a replay or the label given again
// starts nothing more, nor does it once the issue has a workspace.
func (b *Bot) labeled(ctx context.Context, a *asking, ev *event) ([]core.ChatNotice, error) {
	label := a.sess.TriggerLabel
	if label == "" || a.sess.Thread != nil || !slices.ContainsFunc(ev.Labeled, func(l string) bool { return strings.EqualFold(l, label) }) {
		return nil, nil
	}
	key := a.place.Platform + ":" + a.place.ChannelID + ":label:" + a.place.ThreadID
	return b.takeInIssue(ctx, a, ev, key, "")
}

// takeInIssue makes a request in an issue, asked by the event's author, its
// workspace's message under key: the first one starts the workspace with the issue
// as context (prompt "": the issue is the prompt).
func (b *Bot) takeInIssue(ctx context.Context, a *asking, ev *event, key, prompt string) ([]core.ChatNotice, error) {
	h, place, sess := a.h, a.place, a.sess
	if a.refusal != nil { // the account may not start work: said in the issue
		return h.Said, h.Refuse(place, a.refusal)
	}
	// Said once per issue at most: in the hub's one comment, and not over a
	// workspace's status.
	if may, err := b.mayTrigger(ctx, h, place, ev, sess.Thread == nil); !may {
		return h.Said, err
	}
	if sess.StartedBy(key) {
		return nil, nil // a replay of the request that started the workspace
	}
	text := prompt
	if sess.Thread == nil {
		// The comment is there before the workspace: every later post edits it.
		if _, err := b.forge.ShowForgeComment(ctx, place, Starting); err != nil {
			return nil, err
		}
		// Fail open: the issue and the request are the work; its conversation helps.
		recent, err := b.forge.RecentForgeComments(ctx, place, ev.CommentID)
		if err != nil {
			b.log.Warn("forge issue's comments not read", "forge", place.Platform, "issue", place.ThreadID, "err", err)
		}
		text = issuePrompt(prompt, ev, recent)
	}
	_, err := h.Take(ctx, b.chat, sess.ChatSession, ev.input(key, text), 0, noFiles)
	return h.Said, err
}

// pullComment takes a review's comment or summary, or a comment that names the
// handle, on a pull request a workspace of the project opened: the workspace's next
// message. Someone else's pull request is not the hub's to answer.
func (b *Bot) pullComment(ctx context.Context, a *asking, ev *event) ([]core.ChatNotice, error) {
	h, place, sess, prompt := a.h, a.place, a.sess, a.prompt
	if !a.asked {
		prompt = strings.TrimSpace(ev.Comment)
	}
	if !ev.Review && !a.asked || prompt == "" {
		return nil, nil // a conversation's comment, or a review without words
	}
	ours, fresh, err := b.forge.JoinPullThread(ctx, sess.ChatSession, ev.Pull)
	if !ours {
		return nil, err
	}
	if a.refusal != nil {
		return h.Said, h.Refuse(place, a.refusal)
	}
	// A reviewer who may not write is told why only when they asked by the handle,
	// and only before the hub has said anything in the pull request.
	if may, err := b.mayTrigger(ctx, h, place, ev, a.asked && fresh); !may {
		return h.Said, err
	}
	if ev.Path != "" {
		where := ev.Path
		if ev.Line > 0 {
			where += " line " + strconv.FormatInt(ev.Line, 10)
		}
		prompt = "On " + where + ": " + prompt
	}
	// Before the message: its turn may end at once, and its reply must find the thread.
	if err := b.forge.NoteReviewThread(ctx, sess, ev.key(place), ev.Pull, ev.Thread); err != nil {
		return nil, err
	}
	_, err = h.Take(ctx, b.chat, sess.ChatSession, ev.input(ev.key(place), prompt), 0, noFiles)
	return h.Said, err
}

// mayTrigger reports whether the event's author may write to the repository, and
// says NotAllowed in place when not and tell.
func (b *Bot) mayTrigger(ctx context.Context, h *chat.Handling, place core.ChatPlace, ev *event, tell bool) (bool, error) {
	may, err := b.forge.MayTrigger(ctx, place, core.ForgeUser{Login: ev.Login, ID: ev.UserID})
	if err != nil {
		return false, err // the forge could not say: asked again when the event is retried
	}
	if !may && tell {
		h.Say(place, NotAllowed)
	}
	return may, nil
}

// key is the idempotency key of the event's message: the forges number comments,
// review comments and reviews apart.
func (e *event) key(place core.ChatPlace) string {
	return place.Platform + ":" + place.ChannelID + ":" + e.Kind + ":" + strconv.FormatInt(e.CommentID, 10)
}

// input is the event's message, by its author (their login, and their profile page).
func (e *event) input(key, text string) core.ChatInput {
	return core.ChatInput{Key: key, Text: text, UserID: e.Login, UserName: e.Login, UserURL: e.Profile}
}

func noFiles(context.Context) ([]core.ChatFile, error) { return nil, nil }

// request finds handle in a comment as a word of its own (case aside) and returns the
// comment without it: what is asked.
func request(comment, handle string) (string, bool) {
	lower, h := strings.ToLower(comment), strings.ToLower(handle)
	for from := 0; ; {
		i := strings.Index(lower[from:], h)
		if i < 0 {
			return "", false
		}
		i += from
		end := i + len(h)
		if boundary(lower, i-1) && boundary(lower, end) {
			return strings.TrimSpace(comment[:i] + comment[end:]), true
		}
		from = end
	}
}

// boundary reports whether s[i] ends a word (out of range does).
func boundary(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	r := rune(s[i])
	return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '@')
}

// issuePrompt is the first message of an issue's workspace: what was asked, and the
// issue and its recent comments as its context (prompt "": the issue is the prompt).
func issuePrompt(prompt string, ev *event, recent []core.ForgeComment) string {
	var b strings.Builder
	body := strings.TrimSpace(ev.Body)
	if prompt == "" {
		b.WriteString(ev.Title)
		if body != "" {
			b.WriteString("\n\n" + body)
		}
		fmt.Fprintf(&b, "\n\nThis is issue #%d.", ev.Issue)
	} else {
		b.WriteString(prompt)
		fmt.Fprintf(&b, "\n\nThis was asked in issue #%d: %s", ev.Issue, ev.Title)
		if body != "" {
			b.WriteString("\n\n" + body)
		}
	}
	if len(recent) > 0 {
		b.WriteString("\n\nThe issue's recent comments:")
		for _, c := range recent {
			fmt.Fprintf(&b, "\n\n%s wrote: %s", c.Login, c.Body)
		}
	}
	return b.String()
}
