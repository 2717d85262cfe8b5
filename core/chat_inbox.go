package core

import (
	"context"
	"fmt"
	"time"
)

// Inbox limits: a handler that keeps failing is retried with backoff a few times, then
// the event is kept as failed with its error.
const (
	maxChatEventAttempts = 5
	chatEventRetryAfter  = 5 * time.Second
)

// ChatArrival is an event a bot received from its platform and verified (a signed
// request, the Socket Mode or gateway connection): the chat inbox's scope. Handling
// it later finds the binding and the session from what it says.
type ChatArrival struct {
	Platform string
	EventID  string
	// ThreadKey orders the events of one thread: they are handled one at a time.
	ThreadKey string
	Payload   []byte
}

// AcceptChatEvent stores a received event for the inbox worker and wakes it. It is
// what a platform webhook does before acknowledging, so it must be quick; false means
// the event was seen before (a retry) and nothing more is to be done.
func (s *Chat) AcceptChatEvent(ctx context.Context, in ChatArrival) (bool, error) {
	return s.acceptChatEvent(ctx, s.store, in)
}

// acceptChatEvent is AcceptChatEvent for every surface that uses the inbox (chat
// bots, forges).
func (k kernel) acceptChatEvent(ctx context.Context, store TxStore, in ChatArrival) (bool, error) {
	platform, eventID, threadKey, payload := in.Platform, in.EventID, in.ThreadKey, in.Payload
	if eventID == "" {
		return false, Errorf(CodeInvalidRequest, "the event has no id")
	}
	sealed, err := k.seal(payload, SealedChatEvent.binding(platform, eventID))
	if err != nil {
		return false, err
	}
	now := k.clock.Now()
	e := &ChatEvent{Platform: platform, EventID: eventID, ThreadKey: threadKey, Payload: sealed, Status: "pending", NextAt: now, At: now}
	var fresh bool
	err = store.InTx(ctx, func(q Queries) error {
		var err error
		if fresh, err = q.InsertChatEvent(ctx, e); err != nil || !fresh {
			return err
		}
		return wake(ctx, q, ChatEventChannel, platform)
	})
	return fresh, err
}

// ChatEventHandler handles one received event's payload (the bot's logic). It returns
// what to say in threads rather than saying it: core queues the notices when it
// settles the event, so they go out once however often the event is retried.
type ChatEventHandler func(ctx context.Context, payload []byte) ([]ChatNotice, error)

// HandleChatEvents claims due inbox events and runs handle on each (one thread's
// events in order), settling each: done (with what the bot said queued), retried
// later, or failed after the last try.
// It reports each one settled.
func (s *ChatQueues) HandleChatEvents(ctx context.Context, leaseFor time.Duration, limit int, handlers map[string]ChatEventHandler) ([]ChatEventReport, error) {
	events, err := s.ClaimChatEvents(ctx, leaseFor, limit)
	if err != nil {
		return nil, err
	}
	reports := make([]ChatEventReport, 0, len(events))
	for _, e := range events {
		rep, err := s.HandleChatEvent(ctx, e, handlers)
		if err != nil {
			return reports, err
		}
		reports = append(reports, rep)
	}
	return reports, nil
}

// ClaimChatEvents leases up to limit due inbox events (each thread's oldest pending
// only, so a thread is handled in order) under a fresh claim token.
func (s *ChatQueues) ClaimChatEvents(ctx context.Context, leaseFor time.Duration, limit int) ([]*ChatEvent, error) {
	events, err := s.store.ClaimChatEvents(ctx, s.newLeaseToken(), s.clock.Now(), leaseFor, limit)
	if err != nil {
		return nil, fmt.Errorf("claim chat events: %w", err)
	}
	return events, nil
}

// HandleChatEvent runs the platform's handler on a claimed event and settles it under
// its lease: done (with what the bot said queued), retried later, or failed after the
// last try; released, not counted, when the hub is stopping.
func (s *ChatQueues) HandleChatEvent(ctx context.Context, e *ChatEvent, handlers map[string]ChatEventHandler) (ChatEventReport, error) {
	said, err := s.handleChatEvent(ctx, e, handlers[e.Platform])
	released := s.judgeChatEvent(e, err, ctx.Err() != nil)
	if err := s.settleChatEvent(context.WithoutCancel(ctx), e, said); err != nil {
		return ChatEventReport{}, fmt.Errorf("settle chat event %s: %w", e.EventID, err)
	}
	return ChatEventReport{Platform: e.Platform, Status: e.Status, Released: released}, nil
}

// judgeChatEvent sets what handling did to e: done, retried with backoff, or failed
// after the last try. A handling cut short by the hub stopping is not a try: the event
// is due again at once (released).
func (s *ChatQueues) judgeChatEvent(e *ChatEvent, err error, stopping bool) (released bool) {
	now := s.clock.Now()
	if err != nil && stopping {
		e.Status, e.NextAt = "pending", now
		return true
	}
	e.Attempts++
	switch {
	case err == nil:
		e.Status, e.LastError = "done", ""
	case e.Attempts >= maxChatEventAttempts:
		e.Status, e.LastError = "failed", err.Error()
		s.log().Warn("chat event given up", "platform", e.Platform, "event", e.EventID, "err", err)
	default:
		e.Status, e.LastError = "pending", err.Error()
		e.NextAt = now.Add(chatEventBackoff.Delay(e.Attempts, s.rand))
		s.log().Info("chat event will be retried", "platform", e.Platform, "event", e.EventID, "err", err)
	}
	return false
}

func (s *ChatQueues) handleChatEvent(ctx context.Context, e *ChatEvent, handle ChatEventHandler) ([]ChatNotice, error) {
	if handle == nil {
		return nil, fmt.Errorf("no handler for platform %s", e.Platform)
	}
	payload, err := s.open(e.Payload, SealedChatEvent.binding(e.Platform, e.EventID))
	if err != nil {
		return nil, err
	}
	return handle(ctx, []byte(payload))
}
