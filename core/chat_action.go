package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Buttons in chat threads (issue 16): Stop on a turn's status message, Allow and Deny
// on an approval's message. A press is taken for the member who pressed it, only when
// they may talk to the thread's workspace (the binding's channels and roles), and only
// on the thread's own workspace. A press on what already ended (a second click, a
// decision taken elsewhere) changes nothing and says how it stands.

// Chat action kinds.
const (
	ChatActionStop  = "stop"
	ChatActionAllow = "allow"
	ChatActionDeny  = "deny"
)

// Approval notices: NoticeApproval asks a thread for an approval's decision (Allow /
// Deny buttons); NoticeApprovalDecided edits that message once the approval is
// decided, wherever (the API, another thread, a timeout, the turn's end), so every
// thread shows the decision and no button is left to press.
const (
	NoticeApproval        = "approval"
	NoticeApprovalDecided = "approval_decided"
)

// ChatAction is one button pressed in a thread.
type ChatAction struct {
	// Place is the thread the button's message is in. A ChannelID "" finds the thread
	// by its id alone (a Discord thread is a channel).
	Place  ChatPlace
	UserID string
	Roles  []string // Discord: the member's roles
	Kind   string
	Target string // the turn (stop) or approval (allow, deny) id
}

// ChatActionResult says how a press went.
type ChatActionResult struct {
	// Done: this press took effect. Otherwise what it aimed at had already ended:
	// Status says how (an approval's status, or "ended" for a turn).
	Done bool
	// Status is the approval's status after the press (allowed, denied, ...).
	Status    ApprovalStatus
	DecidedBy string
}

// Act takes a button press. Refusals are core errors the bot words (CodeChatNotAllowed,
// CodeChatNoWorkspace, CodeChatNotBound; CodeApprovalNotFound, CodeTurnNotFound for a
// button that is not the thread's).
func (s *Chat) Act(ctx context.Context, a ChatAction) (*ChatActionResult, error) {
	var sess *ChatSession
	var err error
	if a.Place.ChannelID == "" {
		sess, err = s.ChatSessionForThread(ctx, a.Place)
	} else {
		sess, err = s.ChatSessionFor(ctx, a.Place)
	}
	if err != nil {
		return nil, err
	}
	if sess.Thread == nil {
		return nil, Errorf(CodeChatNoWorkspace, "this thread has no workspace")
	}
	if err := sess.Permits(a.Roles); err != nil {
		return nil, err
	}
	wsID, by := sess.Thread.WorkspaceID, a.Place.Platform+":"+a.UserID
	switch a.Kind {
	case ChatActionStop:
		_, err := s.workspaces.StopTurn(ctx, sess.Account, wsID, a.Target)
		var ce *Error
		if errors.As(err, &ce) && ce.Code == CodeTurnNotRunning {
			return &ChatActionResult{}, nil
		}
		if err != nil {
			return nil, err
		}
		return &ChatActionResult{Done: true}, nil
	case ChatActionAllow, ChatActionDeny:
		ap, err := s.workspaces.DecideApproval(ctx, sess.Account, wsID, a.Target, a.Kind, by)
		var ce *Error
		if errors.As(err, &ce) && ce.Code == CodeApprovalNotPending {
			cur, err := s.workspaces.store.GetApproval(ctx, wsID, a.Target)
			if err != nil {
				return nil, err
			}
			return &ChatActionResult{Status: cur.Status, DecidedBy: cur.DecidedBy}, nil
		}
		if err != nil {
			return nil, err
		}
		return &ChatActionResult{Done: true, Status: ap.Status, DecidedBy: ap.DecidedBy}, nil
	}
	return nil, Errorf(CodeInvalidRequest, "unknown action %q", a.Kind)
}

// approvalNotice is what an approval notice carries (sealed as its text).
type approvalNotice struct {
	ApprovalID  string          `json:"approvalId"`
	Tool        string          `json:"tool"`
	Summary     string          `json:"summary"`
	Input       json.RawMessage `json:"input,omitempty"`
	InputSHA256 string          `json:"inputSha256,omitempty"`
}

// queueApprovalNotices asks each of the workspace's threads for the decision, in the
// transaction that records the ask.
func queueApprovalNotices(ctx context.Context, q Queries, k kernel, ws *Workspace, a *Approval, ask ApprovalAsk) error {
	body, err := json.Marshal(approvalNotice{ApprovalID: a.ID, Tool: ask.Tool, Summary: ask.Summary, Input: ask.Input,
		InputSHA256: a.InputSHA256})
	if err != nil {
		return err
	}
	return queueThreadNotices(ctx, q, k, ws.ID, NoticeApproval, a.ID, body, a.CreatedAt)
}

// approvalDecision is what an approval_decided notice carries (sealed as its text).
type approvalDecision struct {
	Status    ApprovalStatus `json:"status"`
	DecidedBy string         `json:"decidedBy,omitempty"`
}

// queueDecidedNotices has every thread's approval message say how the approval was
// decided, in the transaction that decides it.
func queueDecidedNotices(ctx context.Context, q Queries, k kernel, workspaceID, approvalID string, status ApprovalStatus, by string) error {
	body, err := json.Marshal(approvalDecision{Status: status, DecidedBy: by})
	if err != nil {
		return err
	}
	return queueThreadNotices(ctx, q, k, workspaceID, NoticeApprovalDecided, approvalID, body, k.clock.Now())
}

// queueThreadNotices queues a notice of kind about an approval for each of the
// workspace's threads, body sealed per notice; a decided notice refers to the
// approval's notice of the same thread.
func queueThreadNotices(ctx context.Context, q Queries, k kernel, workspaceID, kind, approvalID string, body []byte, at time.Time) error {
	threads, err := q.ChatThreadsOf(ctx, workspaceID)
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
		if n.SealedText, err = k.seal(body, chatNoticeBinding(t.Place.Platform, n.Key)); err != nil {
			return err
		}
		ns = append(ns, n)
	}
	if _, err := q.InsertChatNotices(ctx, ns); err != nil {
		return err
	}
	return q.Notify(ctx, ChatReplyChannel, workspaceID)
}

// openApprovalNotice reads an approval notice's text into n.
func openApprovalNotice(n *ChatNotice) error {
	var b approvalNotice
	if err := json.Unmarshal([]byte(n.Text), &b); err != nil {
		return fmt.Errorf("approval notice: %w", err)
	}
	n.ApprovalID, n.Tool, n.Summary, n.Text = b.ApprovalID, b.Tool, b.Summary, ""
	n.Input, n.InputSHA256 = b.Input, b.InputSHA256
	return nil
}

// openDecidedNotice reads an approval_decided notice into n: the decision (its own
// text) and the question and message of the approval notice it refers to.
func (s *ChatQueues) openDecidedNotice(c *ClaimedChatNotice, n *ChatNotice) error {
	var d approvalDecision
	if err := json.Unmarshal([]byte(n.Text), &d); err != nil {
		return fmt.Errorf("approval decided notice: %w", err)
	}
	n.Status, n.DecidedBy, n.MessageRef, n.Text = d.Status, d.DecidedBy, c.RefersRef, ""
	if c.RefersSealed == nil {
		return nil
	}
	asked, err := s.open(c.RefersSealed, chatNoticeBinding(c.Place.Platform, c.RefersTo))
	if err != nil {
		return err
	}
	q := ChatNotice{Text: asked}
	if err := openApprovalNotice(&q); err != nil {
		return err
	}
	n.ApprovalID, n.Tool, n.Summary, n.Input, n.InputSHA256 = q.ApprovalID, q.Tool, q.Summary, q.Input, q.InputSHA256
	return nil
}
