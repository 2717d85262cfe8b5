package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// Live turns (extensions of the contract): what the agent does while it
// works, stopping a turn, and deciding what the agent asks to do in the
// approval-required mode.

// TurnEvent is one step of a turn (GET /v1/api/workspaces/{id}/events).
type TurnEvent struct {
	Seq        int64  `json:"seq"`
	TurnID     string `json:"turnId"`
	Type       string `json:"type"` // tool_started, tool_finished, tool_denied, text, approval_requested, approval_resolved, turn_finished
	Tool       string `json:"tool,omitempty"`
	Summary    string `json:"summary,omitempty"`
	Delta      string `json:"delta,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	ApprovalID string `json:"approvalId,omitempty"`
	Status     string `json:"status,omitempty"`
	DecidedBy  string `json:"decidedBy,omitempty"`
	// Decider names the person who decided, on approval_resolved (an extension).
	Decider *Author `json:"decider,omitempty"`
	// Input and InputSHA256, on approval_requested: the tool's whole input (what an
	// Allow lets run; Summary is only a short description) and the hash of its
	// canonical JSON. Reason, on an approval_resolved the hub decided without asking.
	Input       json.RawMessage `json:"input,omitempty"`
	InputSHA256 string          `json:"inputSha256,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	CreatedAt   Millis          `json:"createdAt"`
}

// EventPage is a page of turn events and the seq to ask after next.
type EventPage struct {
	Events    []TurnEvent `json:"events"`
	LatestSeq int64       `json:"latestSeq"`
}

// ListEvents reads the workspace's turn events after afterSeq (the JSON form, for
// polling); limit 0 takes the hub's most (500).
func (c *Client) ListEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) (*EventPage, error) {
	q := url.Values{"afterSeq": {strconv.FormatInt(afterSeq, 10)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out EventPage
	if _, err := c.do(ctx, request{method: http.MethodGet,
		path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/events", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StopTurn asks for a turn to be stopped; running says whether its agent was running
// (false: it had not started and ends without running).
func (c *Client) StopTurn(ctx context.Context, workspaceID, turnID string) (running bool, err error) {
	var out struct {
		Running bool `json:"running"`
	}
	_, err = c.do(ctx, request{method: http.MethodPost,
		path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/turns/" + url.PathEscape(turnID) + "/stop"}, &out)
	return out.Running, err
}

// Approval is a decision taken on what an agent asked to do.
type Approval struct {
	ApprovalID string  `json:"approvalId"`
	TurnID     string  `json:"turnId"`
	Status     string  `json:"status"` // allowed or denied
	DecidedBy  string  `json:"decidedBy"`
	Decider    *Author `json:"decider,omitempty"`
	DecidedAt  Millis  `json:"decidedAt"`
}

// DecideApproval allows (allow true) or denies an approval. A decision is taken
// once: a second one is an *Error with code approval_not_pending (so is a retry whose
// first answer was lost: the decision stands either way).
func (c *Client) DecideApproval(ctx context.Context, workspaceID, approvalID string, allow bool) (*Approval, error) {
	decision := "deny"
	if allow {
		decision = "allow"
	}
	var out Approval
	if _, err := c.do(ctx, request{method: http.MethodPost,
		path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/approvals/" + url.PathEscape(approvalID),
		json: map[string]string{"decision": decision}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// OpenPullRequest asks for the workspace branch's pull request on a project whose
// pull requests are off (an extension). The workspace comes back with PullRequest set
// when the branch had reached the repository; otherwise its next push opens it. A
// refusal is an *Error with code pull_request_refused, in the forge's words.
func (c *Client) OpenPullRequest(ctx context.Context, workspaceID string) (*Workspace, error) {
	var out struct {
		Workspace Workspace `json:"workspace"`
	}
	if _, err := c.do(ctx, request{method: http.MethodPost,
		path: "/v1/api/workspaces/" + url.PathEscape(workspaceID) + "/pull-request"}, &out); err != nil {
		return nil, err
	}
	return &out.Workspace, nil
}
