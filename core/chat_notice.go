package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// settleChatEvent records how handling e went and, when it was handled, queues what
// the bot had to say, in one transaction: an event is answered exactly when it is
// settled done, so a retried event never repeats its answer. Nothing is written when
// the lease was lost (another worker handles the event again and says it then).
func (s *ChatQueues) settleChatEvent(ctx context.Context, e *ChatEvent, said []ChatNotice) error {
	var queued []*QueuedChatNotice
	if e.Status == "done" {
		for i, n := range said {
			key := e.EventID + ":" + strconv.Itoa(i)
			sealed, err := s.seal([]byte(n.Text), SealedChatNotice.binding(e.Platform, key))
			if err != nil {
				return err
			}
			queued = append(queued, &QueuedChatNotice{Place: n.Place, Key: key, Kind: NoticeText, SealedText: sealed, At: s.clock.Now()})
		}
	}
	return s.store.InTx(ctx, func(q Queries) error {
		held, err := q.SettleChatEvent(ctx, e, e.Lease)
		if err != nil || !held || len(queued) == 0 {
			return err
		}
		if _, err := q.InsertChatNotices(ctx, queued); err != nil {
			return err
		}
		return wake(ctx, q, ChatReplyChannel, e.Platform)
	})
}

// PostChatNotices claims due notices and posts each through the platform's poster,
// outside any transaction, settling it under the lease. It reports each one settled.
func (s *ChatQueues) PostChatNotices(ctx context.Context, leaseFor time.Duration, limit int, posters map[string]ChatPoster) ([]ChatPostReport, error) {
	claimed, err := s.ClaimChatNotices(ctx, leaseFor, limit)
	if err != nil {
		return nil, err
	}
	return postEach(ctx, claimed, func(c *ClaimedChatNotice) (ChatPostReport, error) { return s.PostChatNotice(ctx, c, posters) })
}

// ClaimChatNotices leases up to limit due notices (each thread's oldest pending only,
// and a failure notice only after its thread's pending replies).
func (s *ChatQueues) ClaimChatNotices(ctx context.Context, leaseFor time.Duration, limit int) ([]*ClaimedChatNotice, error) {
	claimed, err := s.store.ClaimChatNotices(ctx, s.newLeaseToken(), s.clock.Now(), leaseFor, limit)
	if err != nil {
		return nil, fmt.Errorf("claim chat notices: %w", err)
	}
	return claimed, nil
}

// PostChatNotice posts a claimed notice and settles it under the lease.
func (s *ChatQueues) PostChatNotice(ctx context.Context, c *ClaimedChatNotice, posters map[string]ChatPoster) (ChatPostReport, error) {
	return postOne(ctx, s, "notice", c,
		func(c *ClaimedChatNotice) ChatPostResult { return s.postChatNotice(ctx, c, posters[c.Place.Platform]) },
		func(ctx context.Context, c *ClaimedChatNotice) error {
			_, err := s.store.SettleChatNotice(ctx, c, c.Lease)
			return err
		})
}

func (c *ClaimedChatNotice) postState() *ChatPostState { return &c.ChatPostState }
func (c *ClaimedChatNotice) where() ChatPlace          { return c.Place }
func (c *ClaimedChatNotice) logAttrs() []any           { return []any{"notice", c.Key} }

func (s *ChatQueues) postChatNotice(ctx context.Context, c *ClaimedChatNotice, poster ChatPoster) ChatPostResult {
	if poster == nil {
		return ChatPostResult{Error: "no poster for platform " + c.Place.Platform, PartsPosted: c.PartsPosted}
	}
	n := ChatNotice{Place: c.Place, Kind: c.Kind, WorkspaceID: c.WorkspaceID, Code: c.Code, PartsPosted: c.PartsPosted}
	if c.SealedText != nil {
		text, err := s.open(c.SealedText, SealedChatNotice.binding(c.Place.Platform, c.Key))
		if err != nil {
			return ChatPostResult{Permanent: true, Error: "the notice could not be opened by the hub"}
		}
		n.Text = text
	}
	switch c.Kind {
	case NoticeApproval:
		if err := openApprovalNotice(&n); err != nil {
			return ChatPostResult{Permanent: true, Error: err.Error()}
		}
	case NoticePullRequestOffer:
		var offer pullRequestOffer
		if err := json.Unmarshal([]byte(n.Text), &offer); err != nil {
			return ChatPostResult{Permanent: true, Error: "the offer could not be read by the hub"}
		}
		n.Text, n.WorkspaceID, n.Branch = "", offer.WorkspaceID, offer.Branch
	case NoticeApprovalDecided:
		if err := s.openDecidedNotice(c, &n); err != nil {
			return ChatPostResult{Permanent: true, Error: err.Error()}
		}
		if n.MessageRef == "" {
			// The question was never posted (or its post gave up): nothing to edit.
			return ChatPostResult{Done: true, PartsPosted: 1}
		}
	}
	res := poster.PostNotice(ctx, n)
	if res.Ref != "" {
		c.MessageRef = res.Ref
	}
	return res
}
