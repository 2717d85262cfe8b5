package core

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Turn status messages: a chat thread shows one message per turn, edited
// in place as the turn's events arrive ("Working… 1m12s" and its last steps, a Stop
// button, what waits for approval), and at the end says how the turn ended; the
// reply follows as its own message, as before. A thread's status message is edited
// at most once per ChatStatusEvery, and only turns that run longer than that get one:
// a quick turn's reply says it all.
//
// A turn's changes (it started, events were written, it finished) bump a row per
// thread (chat_statuses), in the transaction that makes the change; the status
// workers claim rows whose version the message does not show yet and edit it.

const (
	// ChatStatusChannel wakes the status workers; the payload is the workspace id.
	ChatStatusChannel = "wshub_chat_status"
	// DefaultChatStatusEvery is the least time between two edits of a thread's status.
	DefaultChatStatusEvery = 2 * time.Second
	// chatStatusRefresh is how often a running turn's message is edited when nothing
	// happens, so its elapsed time moves.
	chatStatusRefresh = 10 * time.Second
	// ChatStatusSteps is how many of the last tool steps a status shows.
	ChatStatusSteps = 3
	// chatStatusTail is how many of a turn's last events a status is made from.
	chatStatusTail = 40
	// maxChatStatusAttempts: an edit failing this many times in a row is given up
	// (the reply is posted either way).
	maxChatStatusAttempts = 8
)

// Chat status row states.
const (
	ChatStatusOpen   = "open"
	ChatStatusDone   = "done"
	ChatStatusFailed = "failed"
)

// ChatStatusQueries are the store statements of status messages.
type ChatStatusQueries interface {
	// TouchChatStatuses records a change of a turn for every thread of its workspace:
	// a new row (first edited at firstAt) or, for an open one, version+1 (and finished).
	TouchChatStatuses(ctx context.Context, workspaceID, turnID string, now, firstAt time.Time, finished bool) (int64, error)
	// ClaimChatStatuses leases open rows whose message is due an edit: a version not
	// shown yet, or a running turn's elapsed time, once next_at has passed.
	ClaimChatStatuses(ctx context.Context, token string, now time.Time, leaseFor time.Duration, limit int) ([]*ClaimedChatStatus, error)
	SettleChatStatus(ctx context.Context, c *ClaimedChatStatus, token string) (bool, error)
	// TurnEventTail returns a turn's last limit events, newest first, and how many
	// tool steps the turn had in all.
	TurnEventTail(ctx context.Context, workspaceID, turnID string, limit int) ([]*StoredTurnEvent, int, error)
}

// ClaimedChatStatus is a leased status row. The store fills the first fields; core
// sets the rest before settling.
type ClaimedChatStatus struct {
	ThreadID    int64
	TurnID      string
	WorkspaceID string
	Place       ChatPlace
	MessageRef  string
	Version     int // the version claimed: shown once the edit went out
	Shown       int
	Finished    bool
	StartedAt   time.Time
	Attempts    int
	Lease       string

	Status    string
	NextAt    time.Time
	RefreshAt time.Time
	LastError string
}

// ChatStep is one tool step, or what waits for approval, in a status.
type ChatStep struct {
	Tool    string
	Summary string
	// ApprovalID is set on what waits for approval.
	ApprovalID string
	// Denied is set on a step whose approval was denied: it did not run.
	Denied bool
}

// ChatStatusView is what a status message shows.
type ChatStatusView struct {
	Place       ChatPlace
	WorkspaceID string
	TurnID      string
	// MessageRef is the message to edit; "" posts it.
	MessageRef string
	Elapsed    time.Duration
	Finished   bool
	Outcome    Outcome // set once finished
	Steps      int     // tool steps so far
	// Recent are the last tool steps, oldest first (at most ChatStatusSteps).
	Recent []ChatStep
	// Waiting is a step the agent asked approval for, not decided yet.
	Waiting *ChatStep
	// Script is set when the status is of an environment script's run (ScriptSetup,
	// ScriptUpdate) rather than a turn: Output is then its newest line of output.
	Script string
	Output string
}

// ChatStatusPoster posts and edits status messages; a platform's poster that is not
// one shows no status.
type ChatStatusPoster interface {
	// PostStatus posts v (MessageRef "") or edits it in place, and returns the
	// message's ref.
	PostStatus(ctx context.Context, v ChatStatusView) (ref string, res ChatPostResult)
}

// startChatStatuses marks a turn started for its threads' status messages, beside the
// agent's start: the status is a view, which the agent need not wait for. The returned
// wait must be called before the turn is recorded, so that a status's start comes
// before its end.
func (s *Worker) startChatStatuses(ctx context.Context, workspaceID, turnID string) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := s.store.InTx(ctx, func(q Queries) error { return s.in(ctx, q).chatStatuses(workspaceID, turnID, false) })
		if err != nil {
			// The status is a view; the turn runs without it.
			s.log().Warn("chat status not started", "workspace", workspaceID, "turn", turnID, "err", err)
		}
	}()
	return func() { <-done }
}

// ClaimChatStatuses leases up to limit status messages due an edit.
func (s *ChatQueues) ClaimChatStatuses(ctx context.Context, leaseFor time.Duration, limit int) ([]*ClaimedChatStatus, error) {
	claimed, err := s.store.ClaimChatStatuses(ctx, s.newLeaseToken(), s.clock.Now(), leaseFor, limit)
	if err != nil {
		return nil, fmt.Errorf("claim chat statuses: %w", err)
	}
	return claimed, nil
}

// PostChatStatus posts or edits a claimed status message outside any transaction and
// settles it under the lease.
func (s *ChatQueues) PostChatStatus(ctx context.Context, c *ClaimedChatStatus, posters map[string]ChatPoster) (ChatPostReport, error) {
	rep := ChatPostReport{Platform: c.Place.Platform, Kind: "status"}
	now := s.clock.Now()
	c.Status, c.NextAt, c.RefreshAt, c.LastError = ChatStatusOpen, now.Add(s.chatStatusEvery()), now.Add(chatStatusRefresh), ""
	poster, _ := posters[c.Place.Platform].(ChatStatusPoster)
	switch {
	case poster == nil, c.Finished && c.MessageRef == "":
		// No status on this platform; or the turn ended before its status was due:
		// the reply says it all. Nothing was posted, so nothing is counted.
		c.Status, c.Version = ChatStatusDone, c.Shown
		rep.Status, rep.Released = DeliveryDelivered, true
	default:
		v, err := s.statusView(ctx, c)
		if err != nil {
			return rep, err // the lease runs out; claimed again
		}
		ref, res := poster.PostStatus(ctx, v)
		rep.Status = s.judgeStatus(c, ref, res, now)
		if ctx.Err() != nil && !res.Done {
			rep.Released = true
		}
	}
	if _, err := s.store.SettleChatStatus(context.WithoutCancel(ctx), c, c.Lease); err != nil {
		return rep, err
	}
	return rep, nil
}

// judgeStatus records how an edit went on c.
func (s *ChatQueues) judgeStatus(c *ClaimedChatStatus, ref string, res ChatPostResult, now time.Time) DeliveryStatus {
	if res.Done {
		// The next edit is paced from when this one was made, not from its claim: the
		// platform counts its limit on what arrives, and a slow view or post would
		// otherwise bring two edits closer than statusEvery.
		c.MessageRef, c.Attempts, c.NextAt = ref, 0, s.clock.Now().Add(s.chatStatusEvery())
		if c.Finished {
			c.Status = ChatStatusDone
		}
		return DeliveryDelivered
	}
	c.Version = c.Shown // not shown: still due
	c.Attempts++
	c.LastError = res.Error
	switch {
	case res.Permanent || c.Attempts >= maxChatStatusAttempts:
		c.Status = ChatStatusFailed
		s.log().Warn("chat status given up", "platform", c.Place.Platform, "channel", c.Place.ChannelID, "turn", c.TurnID, "err", res.Error)
		return DeliveryFailed
	case res.RetryAfter > 0:
		c.NextAt = now.Add(max(res.RetryAfter, s.chatStatusEvery()))
	default:
		c.NextAt = now.Add(chatPostBackoff.Delay(c.Attempts, s.rand))
	}
	return DeliveryPending
}

// statusView makes what the status shows from the turn's last events.
func (s *ChatQueues) statusView(ctx context.Context, c *ClaimedChatStatus) (ChatStatusView, error) {
	v := ChatStatusView{Place: c.Place, WorkspaceID: c.WorkspaceID, TurnID: c.TurnID, MessageRef: c.MessageRef,
		Finished: c.Finished, Elapsed: s.clock.Now().Sub(c.StartedAt)}
	tail, steps, err := s.store.TurnEventTail(ctx, c.WorkspaceID, c.TurnID, chatStatusTail)
	if err != nil {
		return v, err
	}
	v.Steps = steps
	if name, err := scriptRun(c.TurnID); err == nil {
		v.Script, v.Steps = name, 0
	}
	resolved := map[string]bool{}
	// denied counts, per tool, the tool_denied events seen and not yet matched with
	// the (older) tool_started each ends.
	denied := map[string]int{}
	for _, st := range tail { // newest first
		e, err := s.openEvent(st)
		if err != nil {
			continue
		}
		switch e.Type {
		case EventTurnFinished, EventSetupFinished:
			v.Outcome, v.Elapsed = e.Outcome, e.CreatedAt.Sub(c.StartedAt)
		case EventSetupOutput:
			if line := strings.TrimSpace(e.Delta); v.Output == "" && line != "" {
				v.Output = line
			}
		case EventApprovalResolved:
			resolved[e.ApprovalID] = true
		case EventApprovalRequested:
			if !resolved[e.ApprovalID] && v.Waiting == nil && !c.Finished {
				v.Waiting = &ChatStep{Tool: e.Tool, Summary: e.Summary, ApprovalID: e.ApprovalID}
			}
		case EventToolDenied:
			denied[e.Tool]++
		case EventToolStarted:
			step := ChatStep{Tool: e.Tool, Summary: e.Summary, Denied: denied[e.Tool] > 0}
			if step.Denied {
				denied[e.Tool]--
			}
			if len(v.Recent) < ChatStatusSteps {
				v.Recent = append([]ChatStep{step}, v.Recent...)
			}
		}
	}
	v.Elapsed = max(v.Elapsed, 0)
	return v, nil
}
