package gitea

import (
	"context"
	"fmt"
	"strconv"

	sdk "code.gitea.io/sdk/gitea"
	"github.com/wshub/wshub/adapters/forge/page"
	"github.com/wshub/wshub/core"
)

var _ core.ForgeCommenter = (*Forge)(nil)

// PostIssueComment comments on an issue (or pull request: Gitea numbers both alike)
// and returns the comment's id.
func (f *Forge) PostIssueComment(ctx context.Context, p *core.Project, issue int64, body string) (string, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return "", err
	}
	cm, resp, err := c.CreateIssueComment(r.owner, r.name, issue, sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		return "", refusal(ctx, r, token, fmt.Sprintf("comment on issue #%d of %s", issue, r), resp, err)
	}
	return strconv.FormatInt(cm.ID, 10), nil
}

// EditIssueComment makes comment ref say body (Gitea knows a comment by its id alone).
func (f *Forge) EditIssueComment(ctx context.Context, p *core.Project, issue int64, ref, body string) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return fmt.Errorf("gitea: comment ref %q: %w", ref, err)
	}
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return err
	}
	if _, resp, err := c.EditIssueComment(r.owner, r.name, id, sdk.EditIssueCommentOption{Body: body}); err != nil {
		return refusal(ctx, r, token, fmt.Sprintf("edit comment %d on issue #%d of %s", id, issue, r), resp, err)
	}
	return nil
}

var _ core.ForgeCommentLister = (*Forge)(nil)

// commentsPerPage is Gitea's largest page by default (its MAX_RESPONSE_ITEMS).
const commentsPerPage = 50

// RecentIssueComments reads the newest n comments of an issue, oldest first (Gitea
// lists them oldest first).
func (f *Forge) RecentIssueComments(ctx context.Context, p *core.Project, issue int64, n int) ([]core.ForgeComment, error) {
	c, r, token, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	cs, err := page.Newest(n, func(number int) ([]*sdk.Comment, int, error) {
		cs, resp, err := c.ListIssueComments(r.owner, r.name, issue, sdk.ListIssueCommentOptions{
			ListOptions: sdk.ListOptions{Page: number, PageSize: commentsPerPage}})
		if err != nil {
			return nil, 0, refusal(ctx, r, token, fmt.Sprintf("list the comments of issue #%d of %s", issue, r), resp, err)
		}
		return cs, resp.LastPage, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]core.ForgeComment, len(cs))
	for i, cm := range cs {
		out[i] = core.ForgeComment{ID: cm.ID, Body: cm.Body}
		if u := cm.Poster; u != nil {
			out[i].Login = u.UserName
		}
	}
	return out, nil
}
