package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Buttons in chat threads: Stop on a turn's status message, Allow and Deny
// on an approval's message. A press is taken for the member who pressed it, only when
// they may talk to the thread's workspace (the binding's channels and roles), and only
// on the thread's own workspace. A press on what already ended (a second click, a
// decision taken elsewhere) changes nothing and says how it stands.

// Chat action kinds.
const (
	ChatActionStop  = "stop"
	ChatActionAllow = "allow"
	ChatActionDeny  = "deny"
	// ChatActionPullRequest is Open pull request, on a pull request offer; its target
	// is the workspace.
	ChatActionPullRequest = "pull_request"
)

// Approval notices: NoticeApproval asks a thread for an approval's decision (Allow /
// Deny buttons); NoticeApprovalDecided edits that message once the approval is
// decided, wherever (the API, another thread, a timeout, the turn's end), so every
// thread shows the decision and no button is left to press.
const (
	NoticeApproval        = "approval"
	NoticeApprovalDecided = "approval_decided"
	// NoticePullRequestOffer offers a thread an Open pull request button once its
	// workspace's branch is first pushed, on a project whose pull requests are off.
	NoticePullRequestOffer = "pull_request_offer"
)

// ChatAction is one button pressed in a thread.
type ChatAction struct {
	// Place is the thread the button's message is in. A ChannelID "" finds the thread
	// by its id alone (a Discord thread is a channel).
	Place  ChatPlace
	UserID string
	// UserName is the person's name as the platform shows it.
	UserName string
	Roles    []string // Discord: the member's roles
	Kind     string
	Target   string // the turn (stop) or approval (allow, deny) id
}

// ChatActionResult says how a press went.
type ChatActionResult struct {
	// Done: this press took effect. Otherwise what it aimed at had already ended:
	// Status says how (an approval's status, or "ended" for a turn).
	Done bool
	// Status is the approval's status after the press (allowed, denied, ...).
	Status    ApprovalStatus
	DecidedBy string
	// DeciderName is the name of the person who decided, as it was then.
	DeciderName string
	// Workspace is the workspace after Open pull request: its Pull is the pull
	// request, or only Requested when the next push opens it.
	Workspace *Workspace
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
	wsID, by := sess.Thread.WorkspaceID, chatAuthor(a.Place, a.UserID, a.UserName, "")
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
		ap, err := s.workspaces.decideAs(ctx, sess.Account, wsID, a.Target, a.Kind, by)
		var ce *Error
		if errors.As(err, &ce) && ce.Code == CodeApprovalNotPending {
			cur, err := s.workspaces.store.GetApproval(ctx, wsID, a.Target)
			if err != nil {
				return nil, err
			}
			return &ChatActionResult{Status: cur.Status, DecidedBy: cur.DecidedBy, DeciderName: cur.Decider.name()}, nil
		}
		if err != nil {
			return nil, err
		}
		return &ChatActionResult{Done: true, Status: ap.Status, DecidedBy: ap.DecidedBy, DeciderName: ap.Decider.name()}, nil
	case ChatActionPullRequest:
		if a.Target != wsID {
			return nil, Errorf(CodeWorkspaceNotFound, "the button is not this thread's workspace's")
		}
		ws, err := s.workspaces.OpenPullRequest(ctx, sess.Account, wsID)
		if err != nil {
			return nil, err
		}
		return &ChatActionResult{Done: true, Workspace: ws}, nil
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

// approvalDecision is what an approval_decided notice carries (sealed as its text).
type approvalDecision struct {
	Status      ApprovalStatus `json:"status"`
	DecidedBy   string         `json:"decidedBy,omitempty"`
	DeciderName string         `json:"deciderName,omitempty"`
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
	n.Status, n.DecidedBy, n.DeciderName, n.MessageRef, n.Text = d.Status, d.DecidedBy, d.DeciderName, c.RefersRef, ""
	if c.RefersSealed == nil {
		return nil
	}
	asked, err := s.open(c.RefersSealed, SealedChatNotice.binding(c.Place.Platform, c.RefersTo))
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
