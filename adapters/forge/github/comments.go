package github

import (
	"context"
	"fmt"
	"strconv"

	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/adapters/forge/page"
	"github.com/wshub/wshub/core"
)

var _ core.ForgeCommenter = (*Forge)(nil)

// PostIssueComment comments on an issue (or pull request: GitHub numbers both alike)
// and returns the comment's id.
func (f *Forge) PostIssueComment(ctx context.Context, p *core.Project, issue int64, body string) (string, error) {
	c, r, err := f.client(ctx, p)
	if err != nil {
		return "", err
	}
	cm, _, err := c.Issues.CreateComment(ctx, r.owner, r.name, int(issue), &gh.IssueComment{Body: &body})
	if err != nil {
		return "", refusal(err, r)
	}
	return strconv.FormatInt(cm.GetID(), 10), nil
}

// EditIssueComment makes comment ref say body (GitHub knows a comment by its id alone).
func (f *Forge) EditIssueComment(ctx context.Context, p *core.Project, _ int64, ref, body string) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return fmt.Errorf("github: comment ref %q: %w", ref, err)
	}
	c, r, err := f.client(ctx, p)
	if err != nil {
		return err
	}
	if _, _, err := c.Issues.EditComment(ctx, r.owner, r.name, id, &gh.IssueComment{Body: &body}); err != nil {
		return refusal(err, r)
	}
	return nil
}

var _ core.ForgeCommentLister = (*Forge)(nil)

// commentsPerPage is GitHub's largest page of comments.
const commentsPerPage = 100

// RecentIssueComments reads the newest n comments of an issue, oldest first (GitHub
// lists them oldest first, and in no other order).
func (f *Forge) RecentIssueComments(ctx context.Context, p *core.Project, issue int64, n int) ([]core.ForgeComment, error) {
	c, r, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	cs, err := page.Newest(n, func(number int) ([]*gh.IssueComment, int, error) {
		cs, resp, err := c.Issues.ListComments(ctx, r.owner, r.name, int(issue),
			&gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{Page: number, PerPage: commentsPerPage}})
		if err != nil {
			return nil, 0, refusal(err, r)
		}
		return cs, resp.LastPage, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]core.ForgeComment, len(cs))
	for i, cm := range cs {
		out[i] = core.ForgeComment{ID: cm.GetID(), Login: cm.GetUser().GetLogin(), Body: cm.GetBody(), Bot: cm.GetUser().GetType() == "Bot"}
	}
	return out, nil
}

var _ core.ForgeReviewReplier = (*Forge)(nil)

// ReplyInReview replies in the review thread of comment thread (a review comment's id)
// on pull request number, and returns the reply's id.
func (f *Forge) ReplyInReview(ctx context.Context, p *core.Project, number int64, thread, body string) (string, error) {
	id, err := strconv.ParseInt(thread, 10, 64)
	if err != nil {
		return "", fmt.Errorf("github: review comment %q: %w", thread, err)
	}
	c, r, err := f.client(ctx, p)
	if err != nil {
		return "", err
	}
	cm, _, err := c.PullRequests.CreateCommentInReplyTo(ctx, r.owner, r.name, int(number), body, id)
	if err != nil {
		return "", refusal(err, r)
	}
	return strconv.FormatInt(cm.GetID(), 10), nil
}
