package core

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// What a committed change causes, in one place. A state change (a turn recorded, an
// approval asked or decided, a workspace failed, a runtime's steps) writes its effects
// in its own transaction, through an effects value: the event streams' rows, the
// webhook events with their deliveries, the chat threads' replies, notices and status
// touches, and the NOTIFYs that wake each reader. Readers see an effect exactly when
// the change commits, and a change that rolls back leaves none (the transactional
// outbox).

// outbox is what writing effects needs besides a transaction.
type outbox struct {
	kernel
	// statusEvery is the least time between two edits of a thread's turn status
	// (0: DefaultChatStatusEvery).
	statusEvery time.Duration
}

// effects write what a change causes in the transaction of q.
type effects struct {
	outbox
	ctx context.Context
	q   Queries
}

// in gives the effects of a change made in q's transaction.
func (o outbox) in(ctx context.Context, q Queries) effects { return effects{outbox: o, ctx: ctx, q: q} }

// wake sends a NOTIFY at commit.
func (fx effects) wake(channel, key string) error { return wake(fx.ctx, fx.q, channel, key) }

// wake sends a NOTIFY on channel at the commit of q's transaction: the one way the
// hub wakes a reader (a worker, a stream, a waiting call), so that a wake-up is an
// effect of a change like any other, seen exactly when the change commits. A test
// holds core to it.
func wake(ctx context.Context, q Queries, channel, key string) error {
	return q.Notify(ctx, channel, key)
}

// runningTurnEvents appends a running turn's (or script run's) events as they come,
// moves the thread's status message with them (finished: the run's last), and wakes
// the stream's readers.
func (fx effects) runningTurnEvents(workspaceID, turnID string, finished bool, events ...*TurnEvent) error {
	if len(events) == 0 {
		return nil
	}
	if err := fx.turnEvents(workspaceID, events...); err != nil {
		return err
	}
	return fx.chatStatuses(workspaceID, turnID, finished)
}

// turnEvents appends events to the workspace's event stream (sealed) and wakes its
// readers.
func (fx effects) turnEvents(workspaceID string, events ...*TurnEvent) error {
	stored := make([]*StoredTurnEvent, 0, len(events))
	for _, e := range events {
		st, err := fx.sealEvent(e)
		if err != nil {
			return err
		}
		stored = append(stored, st)
	}
	if err := fx.q.InsertTurnEvents(fx.ctx, stored); err != nil {
		return err
	}
	return fx.wake(EventsChannel, workspaceID)
}

// turnFinished writes the turn's turn_finished event and marks its status messages
// finished: a reader that sees it also sees the reply.
func (fx effects) turnFinished(workspaceID, turnID string, outcome Outcome) error {
	ev := &TurnEvent{WorkspaceID: workspaceID, TurnID: turnID, Type: EventTurnFinished, Outcome: outcome, CreatedAt: fx.clock.Now()}
	if err := fx.turnEvents(workspaceID, ev); err != nil {
		return err
	}
	return fx.chatStatuses(workspaceID, turnID, true)
}

// webhookEvent seals body as ev's and writes one pending delivery of it per endpoint
// the account has now. Endpoints registered later never see it; with no endpoint
// nothing is written.
func (fx effects) webhookEvent(ws *Workspace, ev *Event, body []byte) error {
	hooks, err := fx.q.WebhookIDs(fx.ctx, ws.AccountID)
	if err != nil || len(hooks) == 0 {
		return err
	}
	if ev.SealedBody, err = fx.seal(body, SealedEventBody.binding(ev.AccountID, ev.ID)); err != nil {
		return err
	}
	if err := fx.q.InsertEvent(fx.ctx, ev); err != nil {
		return err
	}
	ds := make([]*Delivery, len(hooks))
	for i, h := range hooks {
		ds[i] = &Delivery{
			ID: NewID(fx.rand, PrefixDelivery), AccountID: ws.AccountID, WebhookID: h, EventID: ev.ID,
			Status: DeliveryPending, MaxAttempts: MaxDeliveryAttempts, NextAttemptAt: ev.CreatedAt, CreatedAt: ev.CreatedAt,
		}
	}
	if err := fx.q.InsertDeliveries(fx.ctx, ds); err != nil {
		return err
	}
	return fx.wake(DeliveryChannel, ev.ID)
}

// turnCompleted is the workspace.turn.completed webhook event of a recorded reply.
func (fx effects) turnCompleted(ws *Workspace, reply *Message, truncated bool, commit TurnCommit) error {
	ev := &Event{
		ID: EventIDFor(ws.ID, reply.TurnID), AccountID: ws.AccountID, WorkspaceID: ws.ID, TurnID: reply.TurnID,
		Type: EventTurnCompleted, CreatedAt: reply.CreatedAt,
	}
	eb := eventBody{
		eventHead: eventHead{EventID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UnixMilli(), WorkspaceID: ws.ID,
			Branch: ws.Branch, TurnID: reply.TurnID},
		Outcome: reply.Outcome, Reply: eventReply{Text: reply.Text, Truncated: truncated},
		MessageID: reply.ID, Origin: ws.Origin, StartedBy: bodyOfAuthor(ws.StartedBy),
	}
	if commit.Committed {
		eb.HeadCommit = commit.SHA
	}
	if commit.Pushed || commit.PushRefused {
		eb.Pushed = &commit.Pushed
	}
	if commit.Pull != nil {
		eb.PullRequest = commit.Pull.Ref()
	}
	body, err := json.Marshal(eb)
	if err != nil {
		return err
	}
	return fx.webhookEvent(ws, ev, body)
}

// approvalRequested is the workspace.approval.requested webhook event of an ask.
func (fx effects) approvalRequested(ws *Workspace, a *Approval, ask ApprovalAsk) error {
	id := DerivedID(PrefixEvent, "approval.requested", ws.ID, a.ID)
	body, err := json.Marshal(approvalEventBody{
		eventHead: eventHead{EventID: id, Type: WebhookApprovalRequested, CreatedAt: a.CreatedAt.UnixMilli(),
			WorkspaceID: ws.ID, Branch: ws.Branch, TurnID: a.TurnID},
		ApprovalID: a.ID, Tool: ask.Tool, Summary: ask.Summary, Input: ask.Input, InputSHA256: a.InputSHA256,
		ExpiresAt: a.ExpiresAt.UnixMilli()})
	if err != nil {
		return err
	}
	return fx.webhookEvent(ws, &Event{ID: id, AccountID: ws.AccountID, WorkspaceID: ws.ID, TurnID: a.TurnID,
		Type: WebhookApprovalRequested, CreatedAt: a.CreatedAt}, body)
}

// chatReplies queues the turn's reply for every thread of the workspace.
func (fx effects) chatReplies(ws *Workspace, reply *Message, truncated bool) error {
	n, err := fx.q.InsertChatDeliveries(fx.ctx, ws.ID, reply.ID, reply.Seq, truncated, reply.CreatedAt)
	if err != nil || n == 0 {
		return err
	}
	return fx.wake(ChatReplyChannel, ws.ID)
}

// chatStatuses records a change of a running turn for its threads' status messages.
func (fx effects) chatStatuses(workspaceID, turnID string, finished bool) error {
	now := fx.clock.Now()
	n, err := fx.q.TouchChatStatuses(fx.ctx, workspaceID, turnID, now, now.Add(fx.chatStatusEvery()), finished)
	if err != nil || n == 0 {
		return err
	}
	return fx.wake(ChatStatusChannel, workspaceID)
}

func (o outbox) chatStatusEvery() time.Duration {
	if o.statusEvery > 0 {
		return o.statusEvery
	}
	return DefaultChatStatusEvery
}

// failureNotices tells the workspace's threads that it failed.
func (fx effects) failureNotices(ws *Workspace, code string) error {
	n, err := fx.q.InsertFailureNotices(fx.ctx, ws.ID, code, fx.clock.Now())
	if err != nil || n == 0 {
		return err
	}
	return fx.wake(ChatReplyChannel, ws.ID)
}

// approvalNotices asks each of the workspace's threads for the decision.
func (fx effects) approvalNotices(ws *Workspace, a *Approval, ask ApprovalAsk) error {
	body, err := json.Marshal(approvalNotice{ApprovalID: a.ID, Tool: ask.Tool, Summary: ask.Summary, Input: ask.Input,
		InputSHA256: a.InputSHA256})
	if err != nil {
		return err
	}
	return fx.threadNotices(ws.ID, NoticeApproval, a.ID, body, a.CreatedAt)
}

// pullRequestOffer is what a pull_request_offer notice carries (sealed as its text).
type pullRequestOffer struct {
	WorkspaceID string `json:"workspaceId"`
	Branch      string `json:"branch"`
}

// pullRequestOffers offers each of the workspace's threads an Open pull request button.
func (fx effects) pullRequestOffers(ws *Workspace) error {
	threads, err := fx.q.ChatThreadsOf(fx.ctx, ws.ID)
	if err != nil || len(threads) == 0 {
		return err
	}
	body, err := json.Marshal(pullRequestOffer{WorkspaceID: ws.ID, Branch: ws.Branch})
	if err != nil {
		return err
	}
	ns := make([]*QueuedChatNotice, 0, len(threads))
	for _, t := range threads {
		n := &QueuedChatNotice{Place: t.Place, Key: "pull-request-offer:" + ws.ID + ":" + strconv.FormatInt(t.ID, 10),
			Kind: NoticePullRequestOffer, At: fx.clock.Now(), AfterReplies: t.ID}
		if n.SealedText, err = fx.seal(body, SealedChatNotice.binding(t.Place.Platform, n.Key)); err != nil {
			return err
		}
		ns = append(ns, n)
	}
	if _, err := fx.q.InsertChatNotices(fx.ctx, ns); err != nil {
		return err
	}
	return fx.wake(ChatReplyChannel, ws.ID)
}

// decidedNotices has every thread's approval message say how it was decided.
func (fx effects) decidedNotices(workspaceID, approvalID string, status ApprovalStatus, by Author) error {
	body, err := json.Marshal(approvalDecision{Status: status, DecidedBy: by.DecidedBy(), DeciderName: by.Name})
	if err != nil {
		return err
	}
	return fx.threadNotices(workspaceID, NoticeApprovalDecided, approvalID, body, fx.clock.Now())
}

// threadNotices queues a notice of kind about an approval for each of the
// workspace's threads, body sealed per notice; a decided notice refers to the
// approval's notice of the same thread.
func (fx effects) threadNotices(workspaceID, kind, approvalID string, body []byte, at time.Time) error {
	threads, err := fx.q.ChatThreadsOf(fx.ctx, workspaceID)
	if err != nil || len(threads) == 0 {
		return err
	}
	ns := make([]*QueuedChatNotice, 0, len(threads))
	for _, t := range threads {
		asked := "approval:" + approvalID + ":" + strconv.FormatInt(t.ID, 10)
		n := &QueuedChatNotice{Place: t.Place, Key: asked, Kind: kind, At: at}
		if kind == NoticeApprovalDecided {
			n.Key, n.RefersTo = "approval-decided:"+approvalID+":"+strconv.FormatInt(t.ID, 10), asked
		}
		if n.SealedText, err = fx.seal(body, SealedChatNotice.binding(t.Place.Platform, n.Key)); err != nil {
			return err
		}
		ns = append(ns, n)
	}
	if _, err := fx.q.InsertChatNotices(fx.ctx, ns); err != nil {
		return err
	}
	return fx.wake(ChatReplyChannel, workspaceID)
}

// approvalAsked announces a pending ask: its event with the whole input, the
// webhook event, the threads' questions and the turn's status.
func (fx effects) approvalAsked(ws *Workspace, a *Approval, ask ApprovalAsk) error {
	if err := fx.turnEvents(ws.ID, &TurnEvent{WorkspaceID: ws.ID, TurnID: a.TurnID, Type: EventApprovalRequested,
		ApprovalID: a.ID, Tool: ask.Tool, Summary: ask.Summary, Input: ask.Input, InputSHA256: a.InputSHA256,
		CreatedAt: a.CreatedAt}); err != nil {
		return err
	}
	if err := fx.approvalRequested(ws, a, ask); err != nil {
		return err
	}
	if err := fx.approvalNotices(ws, a, ask); err != nil {
		return err
	}
	return fx.chatStatuses(ws.ID, a.TurnID, false)
}

// approvalRefused writes the events of an ask the hub denied without asking anyone
// because of its input: what was asked (without the input it could not show) and why
// it was denied. An ask past the per-turn cap writes none: the stream stays bounded.
func (fx effects) approvalRefused(a *Approval, ask ApprovalAsk) error {
	if a.DecidedBy == decidedByLimit {
		return nil
	}
	events := []*TurnEvent{
		{Type: EventApprovalRequested, Tool: ask.Tool, Summary: ask.Summary},
		{Type: EventApprovalResolved, Status: a.Status, DecidedBy: a.DecidedBy, Reason: approvalReason(a)},
	}
	for _, e := range events {
		e.WorkspaceID, e.TurnID, e.ApprovalID, e.CreatedAt = a.WorkspaceID, a.TurnID, a.ID, a.CreatedAt
	}
	return fx.turnEvents(a.WorkspaceID, events...)
}

// approvalDecided announces a decision taken at now: the approval_resolved event,
// the turn's status, the threads' notices, and the waiting turn woken.
func (fx effects) approvalDecided(a *Approval, status ApprovalStatus, by Author, now time.Time) error {
	if err := fx.turnEvents(a.WorkspaceID, &TurnEvent{WorkspaceID: a.WorkspaceID, TurnID: a.TurnID,
		Type: EventApprovalResolved, ApprovalID: a.ID, Status: status, DecidedBy: by.DecidedBy(), Decider: by.person(),
		CreatedAt: now}); err != nil {
		return err
	}
	if err := fx.chatStatuses(a.WorkspaceID, a.TurnID, false); err != nil {
		return err
	}
	if err := fx.decidedNotices(a.WorkspaceID, a.ID, status, by); err != nil {
		return err
	}
	return fx.wake(ApprovalChannel, a.ID)
}

// approvalsClosed closes the turn's pending approvals as the turn is recorded, so
// nothing can decide them after.
func (fx effects) approvalsClosed(workspaceID, turnID string) error {
	now := fx.clock.Now()
	ids, err := fx.q.CloseApprovals(fx.ctx, workspaceID, turnID, now)
	if err != nil || len(ids) == 0 {
		return err
	}
	events := make([]*TurnEvent, 0, len(ids))
	for _, id := range ids {
		events = append(events, &TurnEvent{WorkspaceID: workspaceID, TurnID: turnID, Type: EventApprovalResolved,
			ApprovalID: id, Status: ApprovalClosed, CreatedAt: now})
	}
	if err := fx.turnEvents(workspaceID, events...); err != nil {
		return err
	}
	for _, id := range ids {
		if err := fx.decidedNotices(workspaceID, id, ApprovalClosed, Author{}); err != nil {
			return err
		}
		if err := fx.wake(ApprovalChannel, id); err != nil {
			return err
		}
	}
	return nil
}

// turnRecorded is everything a recorded turn causes besides its rows: its pending
// approvals closed, its last event, the webhook event, the threads' replies, and the
// worker woken for the workspace's next message.
func (fx effects) turnRecorded(ws *Workspace, reply *Message, truncated bool, commit TurnCommit) error {
	if err := fx.approvalsClosed(ws.ID, reply.TurnID); err != nil {
		return err
	}
	if err := fx.turnFinished(ws.ID, reply.TurnID, reply.Outcome); err != nil {
		return err
	}
	if err := fx.turnCompleted(ws, reply, truncated, commit); err != nil {
		return err
	}
	if err := fx.chatReplies(ws, reply, truncated); err != nil {
		return err
	}
	// ws is as it was before this turn: its first push is offered a pull request.
	if commit.Pushed && commit.OfferPull && ws.LastPush != PushPushed && ws.Pull.Number == 0 && !ws.Pull.Requested {
		if err := fx.pullRequestOffers(ws); err != nil {
			return err
		}
	}
	return fx.wake(WorkChannel, ws.ID)
}
