package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Approvals: in the approval-required mode an agent asks before it does
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
	// InputSHA256 is the hash of the input shown for the ask (InputHash), "" when the
	// agent gave no input.
	InputSHA256 string
	// DecidedBy says who decided: "api", "slack:<userId>", "discord:<userId>",
	// "app:<memberId>", "hub:<why>" when the hub denied it without asking, or "" for a
	// timeout or a closed turn.
	DecidedBy string
	// Decider is the person who decided, with their name as it was (nil: no person).
	Decider   *Author
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
	// LockTurnApprovals holds, until the transaction ends, a lock on the asks of one
	// turn: concurrent asks are counted (and capped) one after another.
	LockTurnApprovals(ctx context.Context, workspaceID, turnID string) error
	CountApprovals(ctx context.Context, workspaceID, turnID string) (int, error)
	GetApproval(ctx context.Context, workspaceID, id string) (*Approval, error)
	// DecideApproval moves a pending approval to status; false when it was no longer
	// pending (decided once, by whoever came first).
	DecideApproval(ctx context.Context, id string, status ApprovalStatus, by Author, at time.Time) (bool, error)
	// CloseApprovals closes a turn's pending approvals and returns their ids.
	CloseApprovals(ctx context.Context, workspaceID, turnID string, at time.Time) ([]string, error)
}

// approvalReason is what the agent is told of a denial.
func approvalReason(a *Approval) string {
	switch a.Status {
	case ApprovalDenied:
		if r, ok := hubDenials[a.DecidedBy]; ok {
			return r
		}
		return "Denied by a person reviewing this workspace."
	case ApprovalTimedOut:
		return "Denied: nobody answered the approval request in time."
	case ApprovalClosed:
		return "Denied: the turn ended."
	}
	return ""
}

// answerOf is the answer to ask, which a holds. An Allow hands back the input that
// was shown, and only when ask's input is that one: an ask again under a key already
// asked, with another input, is refused, since that input was never shown.
func answerOf(a *Approval, ask ApprovalAsk) ApprovalAnswer {
	ans := ApprovalAnswer{ApprovalID: a.ID, Allow: a.Allowed(), Reason: approvalReason(a)}
	if !ans.Allow || a.InputSHA256 == "" && len(ask.Input) == 0 {
		return ans
	}
	if !SameInput(ask.Input, a.InputSHA256) {
		return ApprovalAnswer{ApprovalID: a.ID, Reason: reasonInputNotSame}
	}
	ans.Input, _ = CanonicalInput(ask.Input)
	ans.InputSHA256 = a.InputSHA256
	return ans
}

// cutSummary bounds an ask's summary; a cut one ends with "…", so it is never taken
// for the whole command (the input is).
func cutSummary(s string) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if cut, ok := capRunes(s, maxEventSummary-1); ok {
		return cut + "…"
	}
	return s
}

// turnApprovals are a running turn's approvals: asked, announced, awaited and, at
// their expiry, timed out. The worker's turns and the remote runtimes' (through the
// runtime API) share them.
type turnApprovals struct{ w *Worker }

func (s *Worker) approvals() turnApprovals { return turnApprovals{w: s} }

// ask is TurnRequest.Approve for a turn this hub runs: the ask is recorded
// (once per key), announced, and waited for until decided, timed out or ctx ends.
func (ta turnApprovals) ask(ctx context.Context, ws *Workspace, turnID string, events *eventRecorder, ask ApprovalAsk) ApprovalAnswer {
	s := ta.w
	// The agent's earlier steps go out first: the ask follows them in the stream.
	events.sync()
	a, err := ta.request(ctx, ws, turnID, ask, events.mask)
	if err != nil {
		s.log().Warn("approval not recorded", "workspace", ws.ID, "turn", turnID, "err", err)
		return ApprovalAnswer{Reason: "Denied: the approval request could not be recorded."}
	}
	for a.Status == ApprovalPending {
		if a, err = ta.await(ctx, ws.ID, a.ID, untilDecided); err != nil {
			return ApprovalAnswer{ApprovalID: a.ID, Reason: "Denied: " + err.Error()}
		}
	}
	return answerOf(a, ask)
}

// request records an ask and, the first time, announces it: the
// approval_requested event (with the whole input), the webhook event and the chat
// threads' messages, in one transaction. An ask past MaxApprovalsPerTurn is recorded
// as denied; one whose input is too large to show whole (or not JSON), or holds a
// secret's value (mask), is denied too, and its events say why. Its tool and summary
// are shown with the secrets' values masked.
func (ta turnApprovals) request(ctx context.Context, ws *Workspace, turnID string, ask ApprovalAsk, mask *Masker) (*Approval, error) {
	s := ta.w
	ask.Key = strings.TrimSpace(ask.Key)
	if ask.Key == "" || len(ask.Key) > maxApprovalKey {
		ask.Key = DerivedID("", ask.Tool, ask.Summary, string(ask.Input))
	}
	ask.Tool, _ = capRunes(strings.ToValidUTF8(strings.TrimSpace(mask.Mask(ask.Tool)), "\uFFFD"), maxEventTool)
	ask.Summary = cutSummary(mask.Mask(ask.Summary))
	now := s.clock.Now()
	timeout := s.config.ApprovalTimeout
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	a := &Approval{ID: NewID(s.rand, PrefixApproval), WorkspaceID: ws.ID, TurnID: turnID, Key: ask.Key,
		Status: ApprovalPending, CreatedAt: now, ExpiresAt: now.Add(timeout)}
	refuse := func(by string) { a.Status, a.DecidedBy, a.DecidedAt = ApprovalDenied, by, &now }
	if len(ask.Input) > 0 {
		canon, err := CanonicalInput(ask.Input)
		switch {
		case err != nil:
			refuse(decidedByBadInput)
		case len(canon) > MaxApprovalInput:
			refuse(decidedByTooLarge)
		case mask.HoldsJSON(canon):
			// What is approved is shown whole, and this could not be shown.
			refuse(decidedBySecret)
		default:
			ask.Input, a.InputSHA256 = canon, InputHash(canon)
		}
	}
	var held *Approval
	err := s.store.InTx(ctx, func(q Queries) error {
		if err := q.LockTurnApprovals(ctx, ws.ID, turnID); err != nil {
			return err
		}
		n, err := q.CountApprovals(ctx, ws.ID, turnID)
		if err != nil {
			return err
		}
		if n >= MaxApprovalsPerTurn && a.Status == ApprovalPending {
			refuse(decidedByLimit)
		}
		var inserted bool
		if held, inserted, err = q.InsertApproval(ctx, a); err != nil || !inserted {
			return err
		}
		if a.Status != ApprovalPending {
			return s.in(ctx, q).approvalRefused(a, ask)
		}
		return s.in(ctx, q).approvalAsked(ws, a, ask)
	})
	return held, err
}

// untilDecided is await's maxWait for a wait bounded only by the approval's
// expiry.
const untilDecided time.Duration = -1

// await waits for a decision on approval id: until it is taken, it expires
// (then it is decided timed_out here), ctx ends (an error), or maxWait passes (>= 0;
// the approval is returned still pending; 0 looks once and does not wait).
func (ta turnApprovals) await(ctx context.Context, workspaceID, id string, maxWait time.Duration) (*Approval, error) {
	s := ta.w
	w := watchKey(s.wake, ApprovalChannel, id, approvalPoll)
	defer w.Close()
	a := &Approval{ID: id}
	_, err := w.until(ctx, deadlineIn(maxWait), func() (bool, time.Duration, error) {
		cur, err := s.store.GetApproval(ctx, workspaceID, id)
		if err != nil {
			return false, 0, fmt.Errorf("the approval could not be read: %w", err)
		}
		a = cur
		if a.Status != ApprovalPending {
			return true, 0, nil
		}
		left := a.ExpiresAt.Sub(s.clock.Now())
		if left <= 0 {
			if a, err = ta.settle(ctx, a, ApprovalTimedOut, Author{}); err != nil {
				return false, 0, err
			}
			return true, 0, nil
		}
		return false, left, nil // looked again as it expires
	})
	if err != nil && ctx.Err() != nil {
		return a, fmt.Errorf("the turn ended while waiting")
	}
	return a, err
}

// settle decides a pending approval without a person (a timeout) and
// returns it as it stands after.
func (ta turnApprovals) settle(ctx context.Context, a *Approval, status ApprovalStatus, by Author) (*Approval, error) {
	s := ta.w
	err := s.store.InTx(ctx, func(q Queries) error {
		return decideIn(s.in(ctx, q), a, status, by)
	})
	if err != nil {
		return a, fmt.Errorf("the approval could not be settled: %w", err)
	}
	return s.store.GetApproval(ctx, a.WorkspaceID, a.ID)
}

// decideIn moves a pending approval to status in fx's transaction and announces it.
// A decision already taken is CodeApprovalNotPending.
func decideIn(fx effects, a *Approval, status ApprovalStatus, by Author) error {
	now := fx.clock.Now()
	ok, err := fx.q.DecideApproval(fx.ctx, a.ID, status, by, now)
	if err != nil {
		return err
	}
	if !ok {
		cur, err := fx.q.GetApproval(fx.ctx, a.WorkspaceID, a.ID)
		if err != nil {
			return err
		}
		return Errorf(CodeApprovalNotPending, "approval %s was already answered: %s", a.ID, cur.Status)
	}
	return fx.approvalDecided(a, status, by, now)
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

// DecideApproval takes a decision on one of the account's approvals, as the request's
// API key.
func (s *Workspaces) DecideApproval(ctx context.Context, acct *Account, workspaceID, approvalID, decision string) (*Approval, error) {
	return s.decideAs(ctx, acct, workspaceID, approvalID, decision, keyAuthor(acct))
}

// decideAs takes a decision on one of the account's approvals as by.
func (s *Workspaces) decideAs(ctx context.Context, acct *Account, workspaceID, approvalID, decision string, by Author) (*Approval, error) {
	status, err := ParseDecision(decision)
	if err != nil {
		return nil, err
	}
	ws, err := accountWorkspace(ctx, s.store, acct, workspaceID)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	return decideApproval(ctx, s.store, s.outbox, ws.ID, approvalID, status, by)
}

// decideApproval is a decision by a person, from the API or a chat button.
func decideApproval(ctx context.Context, store TxStore, o outbox, workspaceID, approvalID string, status ApprovalStatus, by Author) (*Approval, error) {
	if !ValidID(approvalID, PrefixApproval) {
		return nil, Errorf(CodeApprovalNotFound, "no approval %q in this workspace", approvalID)
	}
	var out *Approval
	expired := false
	err := inTx(ctx, store, func(q Queries) error {
		expired = false
		a, err := q.GetApproval(ctx, workspaceID, approvalID)
		if err != nil {
			return notFound(err, CodeApprovalNotFound, "no approval "+approvalID+" in this workspace")
		}
		if a.Status == ApprovalPending && !o.clock.Now().Before(a.ExpiresAt) {
			// Past its time, though the waiting runtime has not settled it yet: the
			// timeout is recorded (this transaction commits), and the decision refused
			// after it.
			expired = true
			return decideIn(o.in(ctx, q), a, ApprovalTimedOut, Author{})
		}
		if err := decideIn(o.in(ctx, q), a, status, by); err != nil {
			return err
		}
		now := o.clock.Now()
		a.Status, a.DecidedBy, a.Decider, a.DecidedAt = status, by.DecidedBy(), by.person(), &now
		out = a
		return nil
	})
	if err == nil && expired {
		return nil, Errorf(CodeApprovalNotPending, "approval %s timed out before it was answered", approvalID)
	}
	return out, err
}

// approvalEventBody is the JSON body of workspace.approval.requested.
type approvalEventBody struct {
	eventHead
	ApprovalID  string          `json:"approvalId"`
	Tool        string          `json:"tool"`
	Summary     string          `json:"summary"`
	Input       json.RawMessage `json:"input,omitempty"`
	InputSHA256 string          `json:"inputSha256,omitempty"`
	ExpiresAt   int64           `json:"expiresAt"`
}

// RemoteApproval is an ask of a remote runtime's turn and, once decided, its answer.
type RemoteApproval struct {
	Approval *Approval
	Answer   ApprovalAnswer
}

// Approve records an ask of the runtime's running turn (once per key) and waits up
// to wait for its decision; a still pending approval is returned as such, and the
// runtime asks again (the hub's timeout, not the runtime's, denies it).
func (r *RuntimeAPI) Approve(ctx context.Context, rc RuntimeCaller, turnID string, ask ApprovalAsk, wait time.Duration) (*RemoteApproval, error) {
	var ws *Workspace
	err := r.locked(ctx, rc, func(q Queries, cur *Workspace) error {
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
	// Fail closed: an ask is never shown without the secrets masked.
	mask, err := projectMask(ctx, r.rt.kernel, r.rt.store, ws.ProjectID)
	if err != nil {
		return nil, err
	}
	a, err := r.rt.approvals().request(ctx, ws, turnID, ask, mask)
	if err != nil {
		return nil, err
	}
	if a.Status == ApprovalPending {
		if a, err = r.rt.approvals().await(ctx, ws.ID, a.ID, wait); err != nil {
			return nil, err
		}
	}
	return &RemoteApproval{Approval: a, Answer: answerOf(a, ask)}, nil
}
