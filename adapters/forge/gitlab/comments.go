package gitlab

import (
	"context"
	"fmt"
	"strconv"

	gl "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/wshub/wshub/core"
)

var (
	_ core.ForgeCommenter     = (*Forge)(nil)
	_ core.ForgePullCommenter = (*Forge)(nil)
)

// PostIssueComment adds a note to an issue (by its iid) and returns the note's id.
func (f *Forge) PostIssueComment(ctx context.Context, p *core.Project, issue int64, body string) (string, error) {
	return f.postNote(ctx, p, func(c *gl.Client, path string) (*gl.Note, error) {
		n, _, err := c.Notes.CreateIssueNote(path, issue, &gl.CreateIssueNoteOptions{Body: &body}, gl.WithContext(ctx))
		return n, err
	})
}

// EditIssueComment makes note ref of the issue say body.
func (f *Forge) EditIssueComment(ctx context.Context, p *core.Project, issue int64, ref, body string) error {
	return f.editNote(ctx, p, ref, func(c *gl.Client, path string, id int64) error {
		_, _, err := c.Notes.UpdateIssueNote(path, issue, id, &gl.UpdateIssueNoteOptions{Body: &body}, gl.WithContext(ctx))
		return err
	})
}

// PostPullComment adds a note to a merge request (by its iid) and returns the note's
// id.
func (f *Forge) PostPullComment(ctx context.Context, p *core.Project, number int64, body string) (string, error) {
	return f.postNote(ctx, p, func(c *gl.Client, path string) (*gl.Note, error) {
		n, _, err := c.Notes.CreateMergeRequestNote(path, number, &gl.CreateMergeRequestNoteOptions{Body: &body}, gl.WithContext(ctx))
		return n, err
	})
}

// EditPullComment makes note ref of the merge request say body.
func (f *Forge) EditPullComment(ctx context.Context, p *core.Project, number int64, ref, body string) error {
	return f.editNote(ctx, p, ref, func(c *gl.Client, path string, id int64) error {
		_, _, err := c.Notes.UpdateMergeRequestNote(path, number, id, &gl.UpdateMergeRequestNoteOptions{Body: &body}, gl.WithContext(ctx))
		return err
	})
}

// postNote makes a note through create (on an issue or a merge request of the
// project's path) and returns its id.
func (f *Forge) postNote(ctx context.Context, p *core.Project, create func(c *gl.Client, path string) (*gl.Note, error)) (string, error) {
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return "", err
	}
	n, err := create(c, pr.path)
	if err != nil {
		return "", refusal(err, pr)
	}
	return strconv.FormatInt(n.ID, 10), nil
}

// editNote changes note ref through edit.
func (f *Forge) editNote(ctx context.Context, p *core.Project, ref string, edit func(c *gl.Client, path string, id int64) error) error {
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return fmt.Errorf("gitlab: note ref %q: %w", ref, err)
	}
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return err
	}
	if err := edit(c, pr.path, id); err != nil {
		return refusal(err, pr)
	}
	return nil
}

var _ core.ForgeCommentLister = (*Forge)(nil)

// RecentIssueComments reads the newest n notes of an issue (GitLab lists them newest
// first when asked), oldest first; system notes ("added label …") are a bot's.
func (f *Forge) RecentIssueComments(ctx context.Context, p *core.Project, issue int64, n int) ([]core.ForgeComment, error) {
	c, pr, err := f.client(ctx, p)
	if err != nil {
		return nil, err
	}
	notes, _, err := c.Notes.ListIssueNotes(pr.path, issue, &gl.ListIssueNotesOptions{ListOptions: gl.ListOptions{PerPage: int64(n)},
		OrderBy: gl.Ptr("created_at"), Sort: gl.Ptr("desc")}, gl.WithContext(ctx))
	if err != nil {
		return nil, refusal(err, pr)
	}
	out := make([]core.ForgeComment, 0, len(notes))
	for i := len(notes) - 1; i >= 0; i-- {
		n := notes[i]
		out = append(out, core.ForgeComment{ID: n.ID, Login: n.Author.Username, Body: n.Body, Bot: n.System})
	}
	return out, nil
}

var _ core.ForgeReviewReplier = (*Forge)(nil)

// ReplyInReview adds a note to discussion thread of merge request number (its iid),
// the discussion of a note on a line of its diff, and returns the note's id.
func (f *Forge) ReplyInReview(ctx context.Context, p *core.Project, number int64, thread, body string) (string, error) {
	return f.postNote(ctx, p, func(c *gl.Client, path string) (*gl.Note, error) {
		n, _, err := c.Discussions.AddMergeRequestDiscussionNote(path, number, thread,
			&gl.AddMergeRequestDiscussionNoteOptions{Body: &body}, gl.WithContext(ctx))
		return n, err
	})
}
