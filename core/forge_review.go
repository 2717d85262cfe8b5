package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A review's line comment is answered in its review thread, beside the line, where
// the forge has one (ForgeReviewReplier): the turn its message starts remembers the
// thread, and the turn's reply in the pull request's forge thread goes there. The
// hub's one comment in the pull request says where the answer is.

// ForgeReviewThread is the review thread a turn answers in: the line comment its
// message came from (GitHub: the thread's first review comment; GitLab: the diff's
// discussion).
type ForgeReviewThread struct {
	TurnID, ProjectID string
	Pull              int64
	Thread            string
	CreatedAt         time.Time
}

// ForgeReviewQueries are the store statements of review threads.
type ForgeReviewQueries interface {
	// AddForgeReviewThread records a turn's thread (one recorded before stays).
	AddForgeReviewThread(ctx context.Context, t *ForgeReviewThread) error
	// ForgeReviewThreadOf is the thread turnID answers in (ErrNoRows: none).
	ForgeReviewThreadOf(ctx context.Context, turnID string) (*ForgeReviewThread, error)
}

// NoteReviewThread records that the message the thread's session is about to send
// under key, a line comment on pull request pull, is answered in the review thread.
// It is written before the message, whose turn may end at once: the turn's id follows
// from the key, as the message's does.
func (s *ForgeEvents) NoteReviewThread(ctx context.Context, sess *ForgeSession, key string, pull int64, thread string) error {
	if sess.Thread == nil || thread == "" {
		return nil
	}
	k, err := IdempotencyKey(&key, nil)
	if err != nil {
		return err
	}
	msgID := DerivedID(PrefixMessage, sess.Account.ID, scopeSend(sess.Thread.WorkspaceID), k)
	return s.store.AddForgeReviewThread(ctx, &ForgeReviewThread{TurnID: TurnIDFor(msgID), ProjectID: sess.Binding.ProjectID,
		Pull: pull, Thread: thread, CreatedAt: s.clock.Now()})
}

// ReplyInReviewThread posts a turn's reply in the review thread its message came
// from, when the place is that pull request's forge thread and the forge can reply
// there; false when the reply belongs in the hub's one comment instead.
func (s *ForgeEvents) ReplyInReviewThread(ctx context.Context, place ChatPlace, turnID, text string) (bool, error) {
	number, pull, err := forgeThread(place.ThreadID)
	if err != nil || !pull || turnID == "" {
		return false, nil
	}
	replier, ok := s.forges[place.Platform].(ForgeReviewReplier)
	if !ok {
		return false, nil
	}
	t, err := s.store.ForgeReviewThreadOf(ctx, turnID)
	if errors.Is(err, ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if t.ProjectID != place.TeamID || t.Pull != number {
		return false, nil // another project's or pull request's thread: not this place's
	}
	p, err := s.store.GetProjectByID(ctx, place.TeamID)
	if err != nil {
		return false, notFound(err, CodeProjectNotFound, "no such project")
	}
	if err := s.openCredential(ctx, p); err != nil {
		return false, err
	}
	if _, err := replier.ReplyInReview(ctx, p, number, t.Thread, text+"\n\n"+ForgeCommentMark); err != nil {
		return false, fmt.Errorf("reply in review thread: %w", err)
	}
	return true, nil
}
