package core

import (
	"context"
	"fmt"
	"time"
)

// Reply posting gives up after this many failed attempts (a platform outage longer
// than the backoff covers; the reply stays in the API either way).
const maxChatReplyAttempts = 12

// ClaimChatReplies leases up to limit due replies (each thread's oldest pending only).
func (s *ChatQueues) ClaimChatReplies(ctx context.Context, leaseFor time.Duration, limit int) ([]*ClaimedChatReply, error) {
	claimed, err := s.store.ClaimChatDeliveries(ctx, s.newLeaseToken(), s.clock.Now(), leaseFor, limit)
	if err != nil {
		return nil, fmt.Errorf("claim chat replies: %w", err)
	}
	return claimed, nil
}

// PostChatReply posts a claimed reply through its platform's poster, outside any
// transaction, and settles it under the lease.
func (s *ChatQueues) PostChatReply(ctx context.Context, c *ClaimedChatReply, posters map[string]ChatPoster) (ChatPostReport, error) {
	return postOne(ctx, s, "reply", c,
		func(c *ClaimedChatReply) ChatPostResult { return s.postChatReply(ctx, c, posters[c.Place.Platform]) },
		func(ctx context.Context, c *ClaimedChatReply) error {
			_, err := s.store.SettleChatDelivery(ctx, c, c.Lease)
			return err
		})
}

// postEach posts claimed rows one after the other (the batch calls).
func postEach[T any](ctx context.Context, claimed []T, post func(T) (ChatPostReport, error)) ([]ChatPostReport, error) {
	reports := make([]ChatPostReport, 0, len(claimed))
	for _, c := range claimed {
		rep, err := post(c)
		if err != nil {
			return reports, err
		}
		reports = append(reports, rep)
	}
	return reports, nil
}

// chatOutboxRow is a claimed reply or notice, as the posting loop sees it.
type chatOutboxRow interface {
	postState() *ChatPostState
	where() ChatPlace
	logAttrs() []any // which row, for logs and errors
}

func (c *ClaimedChatReply) postState() *ChatPostState { return &c.ChatPostState }
func (c *ClaimedChatReply) where() ChatPlace          { return c.Place }
func (c *ClaimedChatReply) logAttrs() []any {
	return []any{"workspace", c.WorkspaceID, "message", c.MessageID}
}

// postOne posts a claimed row outside any transaction, judges the post and settles the
// row under the lease: what replies and notices share.
func postOne[T chatOutboxRow](ctx context.Context, s *ChatQueues, kind string, c T,
	post func(T) ChatPostResult, settle func(context.Context, T) error) (ChatPostReport, error) {
	res := post(c)
	rep := s.judgePost(c.postState(), res, ctx.Err() != nil)
	rep.Platform, rep.Kind = c.where().Platform, kind
	if rep.Status == DeliveryFailed {
		s.log().Warn("chat "+kind+" given up", append([]any{"platform", c.where().Platform,
			"channel", c.where().ChannelID, "err", res.Error}, c.logAttrs()...)...)
	}
	if err := settle(context.WithoutCancel(ctx), c); err != nil {
		return ChatPostReport{}, fmt.Errorf("settle chat %s %v: %w", kind, c.logAttrs(), err)
	}
	return rep, nil
}

// judgePost sets what a post did to a reply's or notice's outbox row: delivered,
// retried (after the platform's Retry-After, else with backoff), or failed when the
// error is permanent or the attempts are spent. A post cut short by the hub stopping
// is not a failed try: it is due again at once.
func (s *ChatQueues) judgePost(st *ChatPostState, res ChatPostResult, stopping bool) ChatPostReport {
	st.PartsPosted = max(st.PartsPosted, res.PartsPosted)
	st.LastError = res.Error
	now := s.clock.Now()
	stopping = stopping && !res.Done
	if !stopping {
		st.Attempts++
	}
	switch {
	case stopping:
		st.Status, st.NextAt = DeliveryPending, now
	case res.Done:
		st.Status = DeliveryDelivered
	case res.Permanent || st.Attempts >= maxChatReplyAttempts:
		st.Status = DeliveryFailed
	default:
		st.Status = DeliveryPending
		wait := res.RetryAfter
		if wait <= 0 {
			wait = chatPostBackoff.Delay(st.Attempts, s.rand)
		}
		st.NextAt = now.Add(wait)
	}
	rep := ChatPostReport{Status: st.Status, Released: stopping}
	if st.Status == DeliveryDelivered && !st.CreatedAt.IsZero() {
		rep.Since = now.Sub(st.CreatedAt)
	}
	return rep
}

func (s *ChatQueues) postChatReply(ctx context.Context, c *ClaimedChatReply, poster ChatPoster) ChatPostResult {
	if poster == nil {
		return ChatPostResult{Error: "no poster for platform " + c.Place.Platform, PartsPosted: c.PartsPosted}
	}
	text, err := s.open(c.SealedText, SealedMessageText.binding(c.WorkspaceID, c.MessageID))
	if err != nil {
		return ChatPostResult{Permanent: true, Error: "the reply could not be opened by the hub"}
	}
	r := ChatReply{
		Place: c.Place, WorkspaceID: c.WorkspaceID, TurnID: c.TurnID, Text: text, Outcome: c.Outcome, Truncated: c.Truncated,
		FailureCode: c.FailureCode, Agent: c.FailureAgent, PartsPosted: c.PartsPosted,
	}
	if c.SealedFailure != nil {
		r.FailureMessage, _ = s.open(c.SealedFailure, SealedMessageFailure.binding(c.WorkspaceID, c.MessageID))
	}
	return poster.PostReply(ctx, r)
}
