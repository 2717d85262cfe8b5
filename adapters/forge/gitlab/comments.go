package gitlab

import (
	"context"
	"fmt"
	"strconv"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/wshub/wshub/core"
)

var _ core.ForgeCommenter = (*Forge)(nil)

// PostIssueComment adds a note to an issue (by its iid) and returns the note's id.
func (f *Forge) PostIssueComment(ctx context.Context, p *core.Project, issue int64, body string) (string, error) {
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return "", err
	}
	n, _, err := c.Notes.CreateIssueNote(pr.path, issue, &gl.CreateIssueNoteOptions{Body: &body}, gl.WithContext(ctx))
	if err != nil {
		return "", refusal(err, pr)
	}
	return strconv.FormatInt(n.ID, 10), nil
}

// EditIssueComment makes note ref of the issue say body.
func (f *Forge) EditIssueComment(ctx context.Context, p *core.Project, issue int64, ref, body string) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return fmt.Errorf("gitlab: note ref %q: %w", ref, err)
	}
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return err
	}
	if _, _, err := c.Notes.UpdateIssueNote(pr.path, issue, id, &gl.UpdateIssueNoteOptions{Body: &body}, gl.WithContext(ctx)); err != nil {
		return refusal(err, pr)
	}
	return nil
}
