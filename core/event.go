package core

import (
	"time"
)

// EventTurnCompleted is the one event type (api.md section 6).
const EventTurnCompleted = "workspace.turn.completed"

// DeliveryChannel is the NOTIFY channel that wakes the webhook delivery worker.
const DeliveryChannel = "wshub_deliveries"

// Event is a finished turn as it is announced: the exact body every delivery of it
// sends, sealed because it carries the reply text.
type Event struct {
	ID          string
	AccountID   string
	WorkspaceID string
	TurnID      string
	Type        string
	SealedBody  []byte
	CreatedAt   time.Time
}

// eventBody is the JSON body of workspace.turn.completed (api.md 6.2); every field is
// required, so none is omitempty.
type eventBody struct {
	eventHead
	Outcome   Outcome    `json:"outcome"`
	Reply     eventReply `json:"reply"`
	MessageID string     `json:"messageId"`
	// Extensions (api.md's fields are unchanged): the commit this turn left on the
	// branch, and whether it reached the project's repository (absent when the turn
	// committed nothing, or the project does not push).
	HeadCommit string `json:"headCommit,omitempty"`
	Pushed     *bool  `json:"pushed,omitempty"`
	// PullRequest is the branch's pull request after this turn's push (absent: none).
	PullRequest *PullRequestRef `json:"pullRequest,omitempty"`
	// Origin and StartedBy say where the workspace was started from and by whom (a
	// schedule's runs name the schedule), as the workspace's status does.
	Origin    string      `json:"origin,omitempty"`
	StartedBy *authorBody `json:"startedBy,omitempty"`
}

// eventHead are the fields every webhook event body starts with.
type eventHead struct {
	EventID     string `json:"eventId"`
	Type        string `json:"type"`
	CreatedAt   int64  `json:"createdAt"`
	WorkspaceID string `json:"workspaceId"`
	Branch      string `json:"branch"`
	TurnID      string `json:"turnId"`
}

type eventReply struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// EventIDFor is the event id of a turn: deterministic per (workspace, turn), so a turn
// recorded again after a failed commit announces the same event.
func EventIDFor(workspaceID, turnID string) string {
	return DerivedID(PrefixEvent, "turn.completed", workspaceID, turnID)
}
