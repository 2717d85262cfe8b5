package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Approvals (issue 16): in the approval-required mode an agent asks before it does
// what needs approval, and the turn waits for a person to decide, from the API
// (POST /workspaces/{id}/approvals/{approvalId}) or a chat thread's buttons. The ask
// becomes an approval_requested turn event, a workspace.approval.requested webhook
// event and a message with buttons in the workspace's threads, all in one
// transaction. A decision is taken once; an approval nobody answers within the
// approval timeout is denied, and one still open when its turn ends is closed.

// ApprovalStatus is where an approval stands.
type ApprovalStatus string

// Approval statuses. Every status but pending is final.
const (
	ApprovalPending  ApprovalStatus = "pending"
	ApprovalAllowed  ApprovalStatus = "allowed"
	ApprovalDenied   ApprovalStatus = "denied"
	ApprovalTimedOut ApprovalStatus = "timed_out" // nobody answered in time: denied
	ApprovalClosed   ApprovalStatus = "closed"    // the turn ended first
)

// Decisions, as the API and chat buttons take them.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"
)

const (
	// ApprovalChannel is the NOTIFY channel of decisions; the payload is the approval id.
	ApprovalChannel = "wshub_approvals"
	// WebhookApprovalRequested is the webhook event of an ask (an extension beside
	// api.md's workspace.turn.completed, signed and delivered the same way).
	WebhookApprovalRequested = "workspace.approval.requested"
	// DefaultApprovalTimeout is how long an approval waits when the hub sets none.
	DefaultApprovalTimeout = 10 * time.Minute
	// MaxApprovalsPerTurn bounds what an agent can ask in one turn; later asks are
	// denied without asking anyone.
	MaxApprovalsPerTurn = 50
	maxApprovalKey      = 200
	// MaxApprovalSummary bounds what an ask shows (a command line). Unlike a step's
	// summary it is never cut: a person allows what they read, and a cut command
	// would run its hidden tail too (`echo safe`, 400 spaces, `; rm -rf ~`). An ask
	// longer than this is denied without asking anyone.
	MaxApprovalSummary = 4000
	// approvalPoll is how often a wait looks at the store when the hub has no
	// wake-ups (and, with them, how long at most a lost notification delays it).
	approvalPoll = 2 * time.Second
)

// Approval is one ask and its decision. What was asked (tool, summary) is kept in
// the ask's approval_requested turn event.
type Approval struct {
	ID          string
	WorkspaceID string
	TurnID      string
	Key         string
	Status      ApprovalStatus
	// DecidedBy says who decided: "api:<keyId>", "slack:<userId>", "discord:<userId>",
	// or "" for a timeout or a closed turn.
	DecidedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	DecidedAt *time.Time
}

// Allowed reports whether the approval lets the agent go on.
func (a *Approval) Allowed() bool { return a.Status == ApprovalAllowed }

// ApprovalQueries are the store statements of approvals.
type ApprovalQueries interface {
	// InsertApproval records a unless its (workspace, turn, key) is known; it returns
	// the row that holds the ask and whether this call inserted it.
	InsertApproval(ctx context.Context, a *Approval) (*Approval, bool, error)
	CountApprovals(ctx context.Context, workspaceID, turnID string) (int, error)
	GetApproval(ctx context.Context, workspaceID, id string) (*Approval, error)
	// DecideApproval moves a pending approval to status; false when it was no longer
	// pending (decided once, by whoever came first).
	DecideApproval(ctx context.Context, id string, status ApprovalStatus, by string, at time.Time) (bool, error)
	// CloseApprovals closes a turn's pending approvals and returns their ids.
	CloseApprovals(ctx context.Context, workspaceID, turnID string, at time.Time) ([]string, error)
}

// approvalReason is what the agent is told of a denial.
func approvalReason(a *Approval) string {
	switch a.Status {
	case ApprovalDenied:
		return "Denied by a person reviewing this workspace."
	case ApprovalTimedOut:
		return "Denied: nobody answered the approval request in time."
	case ApprovalClosed:
		return "Denied: the turn ended."
	}
	return ""
}

func answerOf(a *Approval) ApprovalAnswer {
	return ApprovalAnswer{ApprovalID: a.ID, Allow: a.Allowed(), Reason: approvalReason(a)}
}

// askApproval is TurnRequest.Approve for a turn this hub runs: the ask is recorded
// (once per key), announced, and waited for until decided, timed out or ctx ends.
func (s *Runtime) askApproval(ctx context.Context, ws *Workspace, turnID string, events *eventRecorder, ask ApprovalAsk) ApprovalAnswer {
	if refused := tooLongToShow(ask); refused != nil {
		return *refused
	}
	// The agent's earlier steps go out first: the ask follows them in the stream.
	events.sync()
	a, err := s.requestApproval(ctx, ws, turnID, ask)
	if err != nil {
		s.log().Warn("approval not recorded", "workspace", ws.ID, "turn", turnID, "err", err)
		return ApprovalAnswer{Reason: "Denied: the approval request could not be recorded."}
	}
	for a.Status == ApprovalPending {
		if a, err = s.awaitApproval(ctx, ws.ID, a.ID, 0); err != nil {
			return ApprovalAnswer{ApprovalID: a.ID, Reason: "Denied: " + err.Error()}
		}
	}
	return answerOf(a)
}

// tooLongToShow is the denial of an ask whose summary cannot be shown whole, nil for
// one that can.
func tooLongToShow(ask ApprovalAsk) *ApprovalAnswer {
	n := chars(strings.TrimSpace(ask.Summary))
	if n <= MaxApprovalSummary {
		return nil
	}
	return &ApprovalAnswer{Reason: fmt.Sprintf("Denied: the request is too long to be shown whole to the people reviewing this workspace (%d characters, at most %d).", n, MaxApprovalSummary)}
}

// requestApproval records an ask and, the first time, announces it: the
// approval_requested event, the webhook event and the chat threads' messages, in one
// transaction. An ask past MaxApprovalsPerTurn is recorded as denied.
func (s *Runtime) requestApproval(ctx context.Context, ws *Workspace, turnID string, ask ApprovalAsk) (*Approval, error) {
	ask.Key = strings.TrimSpace(ask.Key)
	if ask.Key == "" || len(ask.Key) > maxApprovalKey {
		ask.Key = DerivedID("", ask.Tool, ask.Summary)
	}
	ask.Tool, _ = capRunes(strings.ToValidUTF8(strings.TrimSpace(ask.Tool), "\uFFFD"), maxEventTool)
	// Whole (askApproval refused longer ones), or cut only by a caller that did not
	// check, which then shows it cut rather than storing more than the bound.
	ask.Summary, _ = capRunes(strings.ToValidUTF8(strings.TrimSpace(ask.Summary), "\uFFFD"), MaxApprovalSummary)
	now := s.clock.Now()
	timeout := s.config.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	a := &Approval{ID: NewID(s.rand, PrefixApproval), WorkspaceID: ws.ID, TurnID: turnID, Key: ask.Key,
		Status: ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(timeout)}
	var held *Approval
	err := s.store.InTx(ctx, func(q Queries) error {
		n, err := q.CountApprovals(ctx, ws.ID, turnID)
		if err != nil {
			return err
		}
		if n >= MaxApprovalsPerTurn {
			a.Status, a.DecidedAt = ApprovalDenied, &now
		}
		var inserted bool
		if held, inserted, err = q.InsertApproval(ctx, a); err != nil || !inserted {
			return err
		}
		if a.Status != ApprovalPending {
			return nil
		}
		ev, err := s.sealEvent(&TurnEvent{WorkspaceID: ws.ID, TurnID: turnID, Type: EventApprovalRequested,
			ApprovalID: a.ID, Tool: ask.Tool, Summary: ask.Summary, CreatedAt: now})
		if err != nil {
			return err
		}
		if err := q.InsertTurnEvents(ctx, []*StoredTurnEvent{ev}); err != nil {
			return err
		}
		if err := s.emitApprovalRequested(ctx, q, ws, a, ask); err != nil {
			return err
		}
		if err := queueApprovalNotices(ctx, q, s.kernel, ws, a, ask); err != nil {
			return err
		}
		if err := touchChatStatuses(ctx, q, s.kernel, ws.ID, turnID, false); err != nil {
			return err
		}
		return q.Notify(ctx, EventsChannel, ws.ID)
	})
	return held, err
}

// awaitApproval waits for a decision on approval id: until it is taken, it expires
// (then it is decided timed_out here), ctx ends (an error), or maxWait passes (> 0;
// the approval is returned still pending).
func (s *Runtime) awaitApproval(ctx context.Context, workspaceID, id string, maxWait time.Duration) (*Approval, error) {
	var give <-chan time.Time
	if maxWait > 0 {
		t := time.NewTimer(maxWait)
		defer t.Stop()
		give = t.C
	}
	wake, stop := (<-chan struct{})(nil), func() {}
	if s.wake != nil {
		wake, stop = s.wake.Wait(ApprovalChannel, id)
	}
	defer stop()
	for {
		a, err := s.store.GetApproval(ctx, workspaceID, id)
		if err != nil {
			return &Approval{ID: id}, fmt.Errorf("the approval could not be read: %w", err)
		}
		if a.Status != ApprovalPending {
			return a, nil
		}
		left := a.ExpiresAt.Sub(s.clock.Now())
		if left <= 0 {
			return s.settleApproval(ctx, a, ApprovalTimedOut, "")
		}
		t := time.NewTimer(min(left, approvalPoll))
		select {
		case <-ctx.Done():
			t.Stop()
			return a, fmt.Errorf("the turn ended while waiting")
		case <-give:
			t.Stop()
			return a, nil
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// settleApproval decides a pending approval without a person (a timeout) and
// returns it as it stands after.
func (s *Runtime) settleApproval(ctx context.Context, a *Approval, status ApprovalStatus, by string) (*Approval, error) {
	err := s.store.InTx(ctx, func(q Queries) error {
		return decideIn(ctx, q, s.kernel, a, status, by)
	})
	if err != nil {
		return a, fmt.Errorf("the approval could not be settled: %w", err)
	}
	return s.store.GetApproval(ctx, a.WorkspaceID, a.ID)
}

// decideIn moves a pending approval to status in q's transaction and announces it
// (the approval_resolved event, the waiting runtime woken). A decision already taken
// is CodeApprovalNotPending.
func decideIn(ctx context.Context, q Queries, k kernel, a *Approval, status ApprovalStatus, by string) error {
	now := k.clock.Now()
	ok, err := q.DecideApproval(ctx, a.ID, status, by, now)
	if err != nil {
		return err
	}
	if !ok {
		cur, err := q.GetApproval(ctx, a.WorkspaceID, a.ID)
		if err != nil {
			return err
		}
		return Errorf(CodeApprovalNotPending, "approval %s was already answered: %s", a.ID, cur.Status)
	}
	ev, err := k.sealEvent(&TurnEvent{WorkspaceID: a.WorkspaceID, TurnID: a.TurnID, Type: EventApprovalResolved,
		ApprovalID: a.ID, Status: status, DecidedBy: by, CreatedAt: now})
	if err != nil {
		return err
	}
	if err := q.InsertTurnEvents(ctx, []*StoredTurnEvent{ev}); err != nil {
		return err
	}
	if err := q.Notify(ctx, EventsChannel, a.WorkspaceID); err != nil {
		return err
	}
	if err := touchChatStatuses(ctx, q, k, a.WorkspaceID, a.TurnID, false); err != nil {
		return err
	}
	if err := queueDecidedNotices(ctx, q, k, a.WorkspaceID, a.ID, status, by); err != nil {
		return err
	}
	return q.Notify(ctx, ApprovalChannel, a.ID)
}

// closeApprovals closes the turn's pending approvals inside the transaction that
// records the turn, so nothing can decide them after.
func (s *Runtime) closeApprovals(ctx context.Context, q Queries, workspaceID, turnID string) error {
	now := s.clock.Now()
	ids, err := q.CloseApprovals(ctx, workspaceID, turnID, now)
	if err != nil || len(ids) == 0 {
		return err
	}
	events := make([]*StoredTurnEvent, 0, len(ids))
	for _, id := range ids {
		ev, err := s.sealEvent(&TurnEvent{WorkspaceID: workspaceID, TurnID: turnID, Type: EventApprovalResolved,
			ApprovalID: id, Status: ApprovalClosed, CreatedAt: now})
		if err != nil {
			return err
		}
		events = append(events, ev)
	}
	if err := q.InsertTurnEvents(ctx, events); err != nil {
		return err
	}
	for _, id := range ids {
		if err := queueDecidedNotices(ctx, q, s.kernel, workspaceID, id, ApprovalClosed, ""); err != nil {
			return err
		}
		if err := q.Notify(ctx, ApprovalChannel, id); err != nil {
			return err
		}
	}
	return nil
}

// ParseDecision reads a decision ("allow" or "deny") as the approval's status.
func ParseDecision(decision string) (ApprovalStatus, error) {
	switch decision {
	case DecisionAllow:
		return ApprovalAllowed, nil
	case DecisionDeny:
		return ApprovalDenied, nil
	}
	return "", Errorf(CodeInvalidRequest, "decision must be %q or %q", DecisionAllow, DecisionDeny)
}

// DecideApproval takes a decision on one of the account's approvals (the API). by
// says who ("api:<keyId>").
func (s *Workspaces) DecideApproval(ctx context.Context, acct *Account, workspaceID, approvalID, decision, by string) (*Approval, error) {
	status, err := ParseDecision(decision)
	if err != nil {
		return nil, err
	}
	ws, err := s.store.GetWorkspace(ctx, acct.ID, workspaceID)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	return decideApproval(ctx, s.store, s.kernel, ws.ID, approvalID, status, by)
}

// decideApproval is a decision by a person, from the API or a chat button.
func decideApproval(ctx context.Context, store TxStore, k kernel, workspaceID, approvalID string, status ApprovalStatus, by string) (*Approval, error) {
	if !ValidID(approvalID, PrefixApproval) {
		return nil, Errorf(CodeApprovalNotFound, "no approval %q in this workspace", approvalID)
	}
	var out *Approval
	err := inTx(ctx, store, func(q Queries) error {
		a, err := q.GetApproval(ctx, workspaceID, approvalID)
		if err != nil {
			return notFound(err, CodeApprovalNotFound, "no approval "+approvalID+" in this workspace")
		}
		if a.Status == ApprovalPending && !k.clock.Now().Before(a.ExpiresAt) {
			// Past its time, though the waiting runtime has not settled it yet.
			if err := decideIn(ctx, q, k, a, ApprovalTimedOut, ""); err != nil {
				return err
			}
			return Errorf(CodeApprovalNotPending, "approval %s timed out before it was answered", a.ID)
		}
		if err := decideIn(ctx, q, k, a, status, by); err != nil {
			return err
		}
		now := k.clock.Now()
		a.Status, a.DecidedBy, a.DecidedAt = status, by, &now
		out = a
		return nil
	})
	return out, err
}

// approvalEventBody is the JSON body of workspace.approval.requested.
type approvalEventBody struct {
	eventHead
	ApprovalID string `json:"approvalId"`
	Tool       string `json:"tool"`
	Summary    string `json:"summary"`
	ExpiresAt  int64  `json:"expiresAt"`
}

// emitApprovalRequested writes the ask's webhook event and its deliveries, like a
// finished turn's (same outbox, same signature).
func (s *Runtime) emitApprovalRequested(ctx context.Context, q Queries, ws *Workspace, a *Approval, ask ApprovalAsk) error {
	id := DerivedID(PrefixEvent, "approval.requested", ws.ID, a.ID)
	body, err := json.Marshal(approvalEventBody{
		eventHead: eventHead{EventID: id, Type: WebhookApprovalRequested, CreatedAt: a.CreatedAt.UnixMilli(),
			WorkspaceID: ws.ID, Branch: ws.Branch, TurnID: a.TurnID},
		ApprovalID: a.ID, Tool: ask.Tool, Summary: ask.Summary, ExpiresAt: a.ExpiresAt.UnixMilli()})
	if err != nil {
		return err
	}
	return s.emitEvent(ctx, q, ws, &Event{ID: id, AccountID: ws.AccountID, WorkspaceID: ws.ID, TurnID: a.TurnID,
		Type: WebhookApprovalRequested, CreatedAt: a.CreatedAt}, body)
}

// RemoteApproval is an ask of a remote runtime's turn and, once decided, its answer.
type RemoteApproval struct {
	Approval *Approval
	Answer   ApprovalAnswer
}

// Approve records an ask of the runtime's running turn (once per key) and waits up
// to wait for its decision; a still pending approval is returned as such, and the
// runtime asks again (the hub's timeout, not the runtime's, denies it).
func (r *Remote) Approve(ctx context.Context, token, session, turnID string, ask ApprovalAsk, wait time.Duration) (*RemoteApproval, error) {
	var ws *Workspace
	err := r.locked(ctx, token, session, func(q Queries, cur *Workspace) error {
		m, err := inFlight(ctx, q, cur.ID, turnID)
		if err != nil {
			return err
		}
		if m == nil {
			return Errorf(CodeTurnNotRunning, "turn %s is not running", turnID)
		}
		ws = cur
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ws.RuntimeMode != ModeApprovalRequired {
		return &RemoteApproval{Approval: &Approval{Status: ApprovalDenied},
			Answer: ApprovalAnswer{Reason: "Denied: nobody answers approvals in this runtime mode."}}, nil
	}
	if refused := tooLongToShow(ask); refused != nil {
		return &RemoteApproval{Approval: &Approval{Status: ApprovalDenied}, Answer: *refused}, nil
	}
	a, err := r.rt.requestApproval(ctx, ws, turnID, ask)
	if err != nil {
		return nil, err
	}
	if a.Status == ApprovalPending {
		if a, err = r.rt.awaitApproval(ctx, ws.ID, a.ID, wait); err != nil {
			return nil, err
		}
	}
	return &RemoteApproval{Approval: a, Answer: answerOf(a)}, nil
}
