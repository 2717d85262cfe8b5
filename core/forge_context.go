package core

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// When an issue's workspace starts, the issue's most recent comments go with the
// request as context: the conversation often says more than the issue's body. They
// are read from the forge, bounded in number and in bytes, without the hub's own
// comments and bots'.

// Bounds of the comments given as context: the newest first claim the bytes.
const (
	maxContextComments = 5
	maxContextBytes    = 4096
)

// ForgeComment is a comment in a forge thread as the hub reads it back.
type ForgeComment struct {
	ID    int64
	Login string
	Body  string
	// Bot: the forge says a bot wrote it (GitHub's apps, GitLab's system notes).
	Bot bool
}

// ForgeCommentLister reads an issue's comments; a forge adapter that is not one
// gives no context beyond the issue.
type ForgeCommentLister interface {
	// RecentIssueComments returns at most n of the newest comments of issue number of
	// p's repository, oldest first.
	RecentIssueComments(ctx context.Context, p *Project, issue int64, n int) ([]ForgeComment, error)
}

// RecentForgeComments are the most recent comments of a forge thread's issue but
// request (the comment that asks, already the prompt), oldest first: at most
// maxContextComments, maxContextBytes in all, the hub's and bots' left out, a comment
// that does not fit cut short.
func (s *ForgeEvents) RecentForgeComments(ctx context.Context, place ChatPlace, request int64) ([]ForgeComment, error) {
	lister, ok := s.forges[place.Platform].(ForgeCommentLister)
	issue, err := strconv.ParseInt(place.ThreadID, 10, 64)
	if !ok || err != nil {
		return nil, nil
	}
	p, err := s.store.GetProjectByID(ctx, place.TeamID)
	if err != nil {
		return nil, notFound(err, CodeProjectNotFound, "no such project")
	}
	if err := s.openCredential(ctx, p); err != nil {
		return nil, err
	}
	// Some of the newest may be left out: ask for more than are kept.
	all, err := lister.RecentIssueComments(ctx, p, issue, 2*maxContextComments)
	if err != nil {
		return nil, fmt.Errorf("recent comments of %s: %w", place.ThreadID, err)
	}
	return boundComments(all, request), nil
}

// boundComments keeps the newest comments of all (oldest first) that are not the
// request's, the hub's or bots', within the bounds.
func boundComments(all []ForgeComment, request int64) []ForgeComment {
	var kept []ForgeComment
	left := maxContextBytes
	for i := len(all) - 1; i >= 0 && len(kept) < maxContextComments && left > len("…"); i-- {
		c := all[i]
		c.Body = strings.TrimSpace(c.Body)
		if c.ID == request || c.Bot || c.Body == "" || strings.Contains(c.Body, ForgeCommentMark) {
			continue
		}
		c.Body = cut(c.Body, left-len("…"))
		left -= len(c.Body)
		kept = append(kept, c)
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	return kept
}
