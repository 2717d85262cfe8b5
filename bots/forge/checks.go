package forge

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wshub/wshub/core"
)

// ChecksLimit is said in a pull request when a failed check comes past the project's
// --fix-checks (%d): the hub takes no more of its failed checks.
const ChecksLimit = "A check failed again, and I have already taken the %d failed checks this project allows on a pull request, so I stop here: the rest is for a person."

// maxCheckOutput bounds what a failed check's message quotes of its output: the end,
// where a failing test or build says why.
const maxCheckOutput = 4 << 10

// failedCheck makes a check that failed on the head commit of a workspace's pull
// request that workspace's follow-up, while the project's --fix-checks allows. No one
// asked for it, so its sender (a CI bot, most often) is neither filtered as a bot nor
// asked for write access: the delivery's signature is the trust.
func (b *Bot) failedCheck(ctx context.Context, kind, projectID string, ev *event) ([]core.ChatNotice, error) {
	place := core.ChatPlace{Platform: kind, TeamID: projectID, ChannelID: core.RepositoryKey(ev.Repositories[0])}
	pull, err := b.forge.PullOfCheck(ctx, place, ev.Check.SHA)
	if pull == 0 {
		return nil, err // no workspace's pull request has the commit as its head: stale, or not ours
	}
	place.ThreadID = core.PullThreadID(pull)
	a, err := b.ask(ctx, place, ev)
	if a == nil || a.sess.FixChecks <= 0 {
		return nil, err
	}
	if a.refusal != nil {
		b.log.Info("forge failed check not taken", "forge", kind, "project", projectID, "err", a.refusal)
		return nil, nil
	}
	if ours, _, err := b.forge.JoinPullThread(ctx, a.sess.ChatSession, pull); !ours {
		return nil, err
	}
	fix, err := b.forge.CheckFixOf(ctx, a.sess, pull, ev.Check.Key)
	switch fix {
	case core.CheckFixSend:
		in := core.ChatInput{Key: place.Platform + ":" + place.ChannelID + ":check:" + ev.Check.Key, Text: ev.Check.prompt()}
		taken, err := a.h.Take(ctx, b.chat, a.sess.ChatSession, in, 0, noFiles)
		if err != nil || !taken {
			return a.h.Said, err
		}
		return a.h.Said, b.forge.RecordCheckFix(ctx, a.sess, pull, ev.Check.Key)
	case core.CheckFixLimit:
		// Said before it is recorded: a retry edits the same comment to the same words.
		a.h.Say(place, fmt.Sprintf(ChecksLimit, a.sess.FixChecks))
		return a.h.Said, b.forge.RecordCheckLimit(ctx, a.sess, pull)
	}
	return nil, err
}

// prompt is the check's follow-up: its name and the end of its output.
func (c *failedCheck) prompt() string {
	out := strings.TrimSpace(c.Output)
	if out == "" {
		return fmt.Sprintf("The check %s failed on this pull request. Find out why and fix it.", c.Name)
	}
	if len(out) > maxCheckOutput {
		cut := len(out) - maxCheckOutput
		for cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut++
		}
		out = "…" + out[cut:]
	}
	return fmt.Sprintf("The check %s failed: %s\n\nFind out why and fix it.", c.Name, out)
}
