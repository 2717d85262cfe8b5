package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A pull request that a workspace opened is a forge thread of its own: its review
// comments, review summaries and comments naming the handle are the workspace's
// follow-ups, and the hub answers there with one comment it edits, as in an issue.
// The thread is bound to the workspace the first time an event names the pull
// request, so a later one finds it as an issue's does.

// pullThreadPrefix starts the thread id of a pull request's conversation: GitLab
// numbers merge requests apart from issues, so a number alone would name both.
const pullThreadPrefix = "pull/"

// PullThreadID is the forge thread id of pull request number.
func PullThreadID(number int64) string { return pullThreadPrefix + strconv.FormatInt(number, 10) }

// forgeThread reads a forge thread id: an issue's number, or a pull request's.
func forgeThread(id string) (number int64, pull bool, err error) {
	n, pull := strings.CutPrefix(id, pullThreadPrefix)
	number, err = strconv.ParseInt(n, 10, 64)
	if err != nil || number < 1 {
		return 0, false, fmt.Errorf("forge thread %q is not an issue's or a pull request's number", id)
	}
	return number, pull, nil
}

// ForgePullCommenter comments on a project's pull requests where the forge numbers
// them apart from issues (GitLab's merge requests). A forge that is not one numbers
// them alike, and its pull requests are commented on as issues.
type ForgePullCommenter interface {
	// PostPullComment comments on pull request number of p's repository and returns
	// the comment's ref.
	PostPullComment(ctx context.Context, p *Project, number int64, body string) (string, error)
	// EditPullComment makes comment ref of the pull request say body.
	EditPullComment(ctx context.Context, p *Project, number int64, ref, body string) error
}

// ForgeReviewReplier answers in a pull request's review thread, where the forge has
// one: GitHub's reply to a review comment, GitLab's note in a diff's discussion.
// Gitea's API cannot reply in a review's thread: its answers stay in the hub's one
// comment.
type ForgeReviewReplier interface {
	// ReplyInReview replies in thread (GitHub: the review comment's id; GitLab: the
	// discussion's) of pull request number of p's repository, and returns the reply's
	// ref.
	ReplyInReview(ctx context.Context, p *Project, number int64, thread, body string) (string, error)
}

// JoinPullThread binds a pull request's thread (sess.Place, pull request number) to
// the workspace of the project that opened it, once; false when none did (someone
// else's pull request: not the hub's to answer). fresh reports that this call bound
// it: the thread had no workspace before.
func (s *ForgeEvents) JoinPullThread(ctx context.Context, sess *ChatSession, number int64) (ok, fresh bool, err error) {
	if sess.Thread != nil {
		return true, false, nil
	}
	wsID, err := s.store.WorkspaceOfPull(ctx, sess.Binding.ProjectID, number)
	if errors.Is(err, ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	t := &ChatThread{Place: sess.Place, WorkspaceID: wsID, CreatedAt: s.clock.Now()}
	if _, err := s.store.InsertChatThread(ctx, t); err != nil {
		return false, false, err
	}
	// Another event of the thread may have bound it first: what is stored wins.
	if sess.Thread, err = s.store.GetChatThread(ctx, sess.Place); err != nil {
		return false, false, err
	}
	return true, true, nil
}

// postForgeComment posts or edits (ref non-empty) the hub's comment in a forge thread.
func postForgeComment(ctx context.Context, forge Forge, p *Project, threadID, ref, text string) (string, error) {
	number, pull, err := forgeThread(threadID)
	if err != nil {
		return "", err
	}
	if pc, ok := forge.(ForgePullCommenter); ok && pull {
		if ref != "" {
			return ref, pc.EditPullComment(ctx, p, number, ref, text)
		}
		return pc.PostPullComment(ctx, p, number, text)
	}
	c, ok := forge.(ForgeCommenter)
	if !ok {
		return "", fmt.Errorf("forge of %s cannot comment", p.Repository)
	}
	if ref != "" {
		return ref, c.EditIssueComment(ctx, p, number, ref, text)
	}
	return c.PostIssueComment(ctx, p, number, text)
}
