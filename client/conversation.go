package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	mrand "math/rand/v2"
	"time"
)

// Messages iterates over the conversation after afterSeq, following latestSeq page
// by page until it has caught up (a page shorter than the limit). An error ends the
// iteration with it.
func (c *Client) Messages(ctx context.Context, workspaceID string, afterSeq int64) iter.Seq2[Message, error] {
	return func(yield func(Message, error) bool) {
		for {
			page, err := c.ListMessages(ctx, workspaceID, afterSeq, maxPage)
			if err != nil {
				yield(Message{}, err)
				return
			}
			for _, m := range page.Messages {
				if !yield(m, nil) {
					return
				}
			}
			if len(page.Messages) < maxPage || page.LatestSeq <= afterSeq {
				return
			}
			afterSeq = page.LatestSeq
		}
	}
}

// maxPage is api.md's page size.
const maxPage = 200

// Reply is how a message's turn ended.
type Reply struct {
	// Message is the user message, as it ended: settled after its turn, or failed or
	// expired when no turn took it.
	Message Message
	// Assistant is the agent's reply (nil when no turn took the message).
	Assistant *Message
	// Failure says why the turn ended in error (nil otherwise).
	Failure *TurnFailure
}

// Outcome is the turn's outcome (completed, interrupted, error), or the message's
// status (failed, expired) when no turn took it.
func (r *Reply) Outcome() string {
	if r.Assistant != nil {
		return r.Assistant.Outcome
	}
	return r.Message.Status
}

// ErrMessageNotFound: WaitForReply was given a message id the conversation lacks.
var ErrMessageNotFound = errors.New("client: no such message in the workspace")

// WaitForReply polls the conversation, with backoff from 200 ms to 5 s, until the
// message's turn has settled, and returns the agent's reply (and the turn failure, if
// any); or until the message failed or expired with no turn. The context bounds the
// wait.
func (c *Client) WaitForReply(ctx context.Context, workspaceID, messageID string) (*Reply, error) {
	var msg *Message
	for m, err := range c.Messages(ctx, workspaceID, 0) {
		if err != nil {
			return nil, err
		}
		if m.MessageID == messageID {
			msg = &m
			break
		}
	}
	if msg == nil {
		return nil, fmt.Errorf("%w: %s", ErrMessageNotFound, messageID)
	}
	delay := 200 * time.Millisecond
	for {
		r, err := c.settled(ctx, workspaceID, msg)
		if err != nil || r != nil {
			return r, err
		}
		wait := delay/2 + time.Duration(mrand.Int64N(int64(delay/2)+1))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// settled looks at the conversation from msg on: the reply of its turn, or msg
// ended without one; nil when the turn is still running or queued.
func (c *Client) settled(ctx context.Context, workspaceID string, msg *Message) (*Reply, error) {
	after := msg.Seq - 1
	for {
		page, err := c.ListMessages(ctx, workspaceID, after, maxPage)
		if err != nil {
			return nil, err
		}
		for i := range page.Messages {
			m := page.Messages[i]
			switch {
			case m.MessageID == msg.MessageID:
				*msg = m
				if m.Status == "failed" || m.Status == "expired" {
					return &Reply{Message: m}, nil
				}
			case m.Role == "assistant" && m.TurnID != "" && m.TurnID == msg.TurnID:
				r := &Reply{Message: *msg, Assistant: &m}
				if f := page.TurnFailure; f != nil && f.TurnID == m.TurnID {
					r.Failure = f
				} else if m.Outcome == "error" {
					r.Failure = c.failureOf(ctx, workspaceID, m)
				}
				return r, nil
			}
		}
		if len(page.Messages) < maxPage || page.LatestSeq <= after {
			return nil, nil
		}
		after = page.LatestSeq
	}
}

// failureOf reads a failed turn's turnFailure: the hub gives it on the page whose
// latest turn failed, so the page ending at the reply is asked for.
func (c *Client) failureOf(ctx context.Context, workspaceID string, reply Message) *TurnFailure {
	page, err := c.ListMessages(ctx, workspaceID, reply.Seq-1, 1)
	if err != nil || page.TurnFailure == nil || page.TurnFailure.TurnID != reply.TurnID {
		return nil
	}
	return page.TurnFailure
}
