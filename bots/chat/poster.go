package chat

import (
	"context"
	"time"

	"github.com/wshub/wshub/core"
)

// Wire is one platform's side of posting: its API calls, in its markup, and how to
// read their errors. What a post says, in how many parts, and what an error means
// for the outbox are decided once, by Poster.
type Wire interface {
	// Post posts text in place's thread (in its channel while it has none), pinging
	// no one.
	Post(ctx context.Context, place core.ChatPlace, text string) error
	// Show posts text in place's thread (ref "") or makes message ref say it, and
	// returns the message's ref. A message shown with a turn's id in stop has a Stop
	// button for that turn; one shown without has no buttons.
	Show(ctx context.Context, place core.ChatPlace, ref, text, stop string) (string, error)
	// Ask posts an approval's question with Allow and Deny buttons for approvalID,
	// and q's file with it when the platform's messages can carry one (FilePoster);
	// it returns the message's ref.
	Ask(ctx context.Context, place core.ChatPlace, approvalID string, q Question) (string, error)
	// Offer posts text with an Open pull request button for workspaceID, and returns
	// the message's ref.
	Offer(ctx context.Context, place core.ChatPlace, text, workspaceID string) (string, error)
	// Failed reads an error of these calls: the wait a rate limit asks for, or whether
	// no retry can fix it.
	Failed(err error) (retryAfter time.Duration, permanent bool)
	// Gone reports an edit of a message the platform no longer has.
	Gone(err error) bool
}

// FilePoster is a Wire whose messages cannot carry a file: an approval's file goes
// after its question, as a second part.
type FilePoster interface {
	PostFile(ctx context.Context, place core.ChatPlace, name string, body []byte) error
}

// Poster posts a platform's replies, notices and turn statuses (core.ChatPoster and
// core.ChatStatusPoster) through its Wire. A bot embeds it, and so is both.
type Poster struct {
	Words Platform
	Wire  Wire
	// MaxPost is the most runes a post holds; MaxQuestion the most an approval's
	// question holds, leaving room under it for the decision line.
	MaxPost, MaxQuestion int
}

var (
	_ core.ChatPoster       = Poster{}
	_ core.ChatStatusPoster = Poster{}
)

// PostReply posts a finished turn in its thread: the reply split to the platform's
// size without breaking code blocks, the outcome and truncation shown. Parts an
// earlier attempt posted are not posted again.
func (p Poster) PostReply(ctx context.Context, r core.ChatReply) core.ChatPostResult {
	return p.postParts(ctx, r.Place, p.ReplyParts(r), r.PartsPosted)
}

// ReplyParts are a finished turn's posts: the reply split to the platform's size, the
// outcome and truncation shown.
func (p Poster) ReplyParts(r core.ChatReply) []string {
	return p.Words.FormatReply(Reply{
		Text: r.Text, Outcome: string(r.Outcome), Truncated: r.Truncated, FailureCode: r.FailureCode,
		FailureMessage: r.FailureMessage, Agent: AgentName(r.Agent),
	}, p.MaxPost)
}

// PostNotice posts what the hub says in a thread: a command's answer or refusal as the
// handler worded it, a workspace failure worded here, or an approval's question and,
// once decided, how.
func (p Poster) PostNotice(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	switch n.Kind {
	case core.NoticeApproval:
		return p.postApproval(ctx, n)
	case core.NoticeApprovalDecided:
		return p.postDecided(ctx, n)
	case core.NoticePullRequestOffer:
		ref, err := p.Wire.Offer(ctx, n.Place, p.Words.PullRequestOffer(n.Branch), n.WorkspaceID)
		res := p.result(err)
		if res.Done {
			res.PartsPosted, res.Ref = 1, ref
		}
		return res
	}
	text := n.Text
	if n.Kind == core.NoticeWorkspaceFailed {
		text = p.Words.FailureNotice(n.WorkspaceID, n.Code)
	}
	return p.postParts(ctx, n.Place, Split(text, p.MaxPost), n.PartsPosted)
}

// PostStatus posts a turn's status in its thread, or edits it in place once posted;
// the Stop button is there while the turn runs. An edit of a message that is gone
// (deleted by someone) posts a new one.
func (p Poster) PostStatus(ctx context.Context, v core.ChatStatusView) (string, core.ChatPostResult) {
	text := p.Words.StatusText(v)
	stop := v.TurnID
	if v.Finished || v.Script != "" { // a script run is stopped with its workspace, not a button
		stop = ""
	}
	if v.MessageRef != "" {
		_, err := p.Wire.Show(ctx, v.Place, v.MessageRef, text, stop)
		if !p.Wire.Gone(err) {
			return v.MessageRef, p.result(err)
		}
	}
	ref, err := p.Wire.Show(ctx, v.Place, "", text, stop)
	return ref, p.result(err)
}

// postApproval asks the thread for a decision: the question with Allow and Deny
// buttons (part 1) and, when the question could not hold the whole input and the
// question's message could not carry it, the input as a file (part 2).
func (p Poster) postApproval(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	q := p.Words.Question(AskOf(n), p.MaxQuestion)
	res := core.ChatPostResult{PartsPosted: n.PartsPosted, Done: true}
	if n.PartsPosted == 0 {
		ref, err := p.Wire.Ask(ctx, n.Place, n.ApprovalID, q)
		if res = p.result(err); !res.Done {
			return res
		}
		res.PartsPosted, res.Ref = 1, ref
	}
	files, apart := p.Wire.(FilePoster)
	if res.PartsPosted == 1 && q.FileName != "" && apart {
		up := p.result(files.PostFile(ctx, n.Place, q.FileName, q.FileBody))
		if !up.Done {
			up.PartsPosted, up.Ref = res.PartsPosted, res.Ref
			return up
		}
		res.PartsPosted = 2
	}
	return res
}

// postDecided edits an approval's message to say how it was decided, without buttons
// (a decision taken anywhere: every thread shows it). A file sent with it stays.
func (p Poster) postDecided(ctx context.Context, n core.ChatNotice) core.ChatPostResult {
	text := p.Words.DecidedText(p.Words.Question(AskOf(n), p.MaxQuestion).Text, n.Status, n.DecidedBy, n.DeciderName)
	_, err := p.Wire.Show(ctx, n.Place, n.MessageRef, text, "")
	if p.Wire.Gone(err) {
		err = nil // deleted on the platform: nothing left to edit
	}
	res := p.result(err)
	if res.Done {
		res.PartsPosted = 1
	}
	return res
}

// postParts posts parts[from:] in order, stopping at the first error.
func (p Poster) postParts(ctx context.Context, place core.ChatPlace, parts []string, from int) core.ChatPostResult {
	for i := from; i < len(parts); i++ {
		if err := p.Wire.Post(ctx, place, parts[i]); err != nil {
			res := p.result(err)
			res.PartsPosted = i
			return res
		}
	}
	return core.ChatPostResult{PartsPosted: len(parts), Done: true}
}

// result judges one call as a post: done, or why not, for the outbox to wait, retry
// or give up.
func (p Poster) result(err error) core.ChatPostResult {
	if err == nil {
		return core.ChatPostResult{Done: true}
	}
	res := core.ChatPostResult{Error: err.Error()}
	res.RetryAfter, res.Permanent = p.Wire.Failed(err)
	return res
}
