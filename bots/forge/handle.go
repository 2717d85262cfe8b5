package forge

import (
	"context"
	"encoding/json"
	"fmt"
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

// handle makes an issue comment that names the project's handle a workspace's
// message: the first one in an issue starts a workspace with the issue as context,
// later ones are its follow-ups. Everything else is ignored, the hub's own comments
// (and another hub's) first.
func (b *Bot) handle(ctx context.Context, kind string, payload []byte) ([]core.ChatNotice, error) {
	var env core.ForgeEnvelope
	if err := json.Unmarshal(payload, &env); err != nil {
		return nil, fmt.Errorf("forge event envelope: %w", err)
	}
	ev, err := parse(kind, env.Event, env.Body)
	if err != nil || !ev.NewIssueComment || ev.Bot || strings.Contains(ev.Comment, core.ForgeCommentMark) {
		return nil, nil // not a person's request: nothing to do, and nothing to retry
	}
	place := core.ChatPlace{Platform: kind, TeamID: env.ProjectID, ChannelID: core.RepositoryKey(ev.Repositories[0]),
		ThreadID: strconv.FormatInt(ev.Issue, 10)}
	h := &chat.Handling{Words: words(kind), Retryable: chat.Retryable, Log: b.log}
	sess, err := b.forge.ForgeSessionFor(ctx, place)
	if sess == nil { // the project takes no events any more, or the store is away
		if chat.Retryable(err) {
			return nil, err
		}
		b.log.Info("forge event for a project without events", "forge", kind, "project", env.ProjectID, "err", err)
		return nil, nil
	}
	prompt, asked := request(ev.Comment, sess.Handle)
	if !asked {
		return nil, nil
	}
	if err != nil { // the account may not start work: said in the issue
		return h.Said, h.Refuse(place, err)
	}
	may, err := b.forge.MayTrigger(ctx, place, core.ForgeUser{Login: ev.Login, ID: ev.UserID})
	if err != nil {
		return nil, err // the forge could not say: asked again when the event is retried
	}
	if !may {
		// Said once per issue at most: in the hub's one comment, and not over a
		// workspace's status.
		if sess.Thread == nil {
			h.Say(place, NotAllowed)
		}
		return h.Said, nil
	}
	key := kind + ":" + place.ChannelID + ":comment:" + strconv.FormatInt(ev.CommentID, 10)
	if sess.StartedBy(key) {
		return nil, nil // a replay of the comment that started the workspace
	}
	text := prompt
	if sess.Thread == nil {
		// The comment is there before the workspace: every later post edits it.
		if _, err := b.forge.ShowForgeComment(ctx, place, Starting); err != nil {
			return nil, err
		}
		text = issuePrompt(prompt, ev)
	}
	in := core.ChatInput{Key: key, Text: text,
		UserID: ev.Login, UserName: ev.Login}
	_, err = h.Take(ctx, b.chat, sess.ChatSession, in, 0, noFiles)
	return h.Said, err
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
// issue as its context.
func issuePrompt(prompt string, ev *event) string {
	var b strings.Builder
	b.WriteString(prompt)
	fmt.Fprintf(&b, "\n\nThis was asked in issue #%d: %s", ev.Issue, ev.Title)
	if body := strings.TrimSpace(ev.Body); body != "" {
		b.WriteString("\n\n" + body)
	}
	return b.String()
}
