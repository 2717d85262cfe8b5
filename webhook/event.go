package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Event types. TypeTurnCompleted is api.md's (section 6); TypeApprovalRequested extends
// it (an agent in the approval-required mode asks to be allowed a step). Switch on
// Event.Type: a later version may add types, and ConstructEvent does not reject them.
const (
	TypeTurnCompleted     = "workspace.turn.completed"
	TypeApprovalRequested = "workspace.approval.requested"
)

// Values of Event.Outcome (api.md 6.2).
const (
	OutcomeCompleted   = "completed"
	OutcomeInterrupted = "interrupted"
	OutcomeError       = "error"
)

// Event is the body of a delivery (api.md 6.2). A turn.completed event has every field
// up to MessageID; an approval.requested event has the fields up to TurnID and the
// approval's.
type Event struct {
	// EventID is the same on every retry and equals the service-event-id header:
	// the key for discarding duplicates (delivery is at least once).
	EventID     string `json:"eventId"`
	Type        string `json:"type"`
	CreatedAt   int64  `json:"createdAt"` // when the turn finished, Unix milliseconds
	WorkspaceID string `json:"workspaceId"`
	Branch      string `json:"branch"` // git branch the agent works on
	TurnID      string `json:"turnId"`
	Outcome     string `json:"outcome"` // OutcomeCompleted, OutcomeInterrupted or OutcomeError
	Reply       Reply  `json:"reply"`
	MessageID   string `json:"messageId"` // the agent's message in the conversation
	// HeadCommit and Pushed extend api.md's event: the commit the turn left on the
	// branch, and whether it reached the project's repository (nil: no push tried).
	HeadCommit string `json:"headCommit,omitempty"`
	Pushed     *bool  `json:"pushed,omitempty"`
	// PullRequest extends it too: the branch's pull request after the turn's push
	// (nil: none opened or kept).
	PullRequest *PullRequest `json:"pullRequest,omitempty"`
	// Origin and StartedBy extend it too (TypeTurnCompleted): where the workspace was
	// started from (one of the Origin values; switch with a default, as later versions
	// may add some) and who started it (nil: not recorded). A schedule's runs have
	// OriginSchedule and a StartedBy of Kind "schedule" naming the schedule.
	Origin    string  `json:"origin,omitempty"`
	StartedBy *Author `json:"startedBy,omitempty"`
	// The approval asked for (TypeApprovalRequested): decide it with POST
	// /v1/api/workspaces/{workspaceId}/approvals/{approvalId} before ExpiresAt (Unix
	// milliseconds), after which it is denied.
	ApprovalID string `json:"approvalId,omitempty"`
	Tool       string `json:"tool,omitempty"`
	Summary    string `json:"summary,omitempty"`
	ExpiresAt  int64  `json:"expiresAt,omitempty"`
	// Input is the tool's whole input as the agent gave it (JSON text; at most 64 KiB), and
	// InputSHA256 the hex sha256 of its canonical form (compact, keys sorted, no HTML
	// escaping): an Allow lets exactly this input run. Summary is only a short
	// description (cut with "…"); Input is what will run.
	Input       RawJSON `json:"input,omitempty"`
	InputSHA256 string  `json:"inputSha256,omitempty"`
}

// Values of Event.Origin: the front-end a workspace was started from.
const (
	OriginAPI      = "api"
	OriginSlack    = "slack"
	OriginDiscord  = "discord"
	OriginApp      = "app"
	OriginGitHub   = "github"
	OriginGitLab   = "gitlab"
	OriginGitea    = "gitea"
	OriginSchedule = "schedule"
)

// Author is who acted, and from where. Kind is an Origin value: for "api" ID and Name
// are the API key's, for "slack" and "discord" the chat user's on the platform, for
// "app" the member's, for the forges the person's login (URL their profile page), and
// for "schedule" the schedule's id and name. Name is as it was when they acted.
type Author struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// RawJSON is a JSON value kept as its text, unparsed (json.Unmarshal it to read it).
// A string rather than json.RawMessage keeps Event comparable with ==.
type RawJSON string

// UnmarshalJSON keeps the value's text.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	*r = RawJSON(b)
	return nil
}

// MarshalJSON writes the text back (null when empty).
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if r == "" {
		return []byte("null"), nil
	}
	return []byte(r), nil
}

// Reply is the agent's answer, capped at 16,384 characters; Truncated says it was cut.
type Reply struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// ErrInvalidPayload wraps a JSON decoding failure of a correctly signed body. It is
// distinct from the signature errors because it points at a format change, not an attack.
var ErrInvalidPayload = errors.New("webhook: signed body is not a valid event")

// ConstructEvent verifies the delivery (see Verify) and only then decodes the body, so
// nothing from an unauthenticated request is ever parsed. A decoding failure matches
// both ErrInvalidPayload and the underlying encoding/json error with errors.Is/As.
// Unknown fields are ignored so that additions to the event do not break receivers.
func ConstructEvent(body []byte, header, secret string) (Event, error) {
	if err := Verify(body, header, secret); err != nil {
		return Event{}, err
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrInvalidPayload, err)
	}
	return ev, nil
}

// PullRequest is a pull (merge) request on the project's forge, as the hub last saw it.
type PullRequest struct {
	URL    string `json:"url"`
	Number int64  `json:"number"`
	State  string `json:"state"` // open, merged or closed
}
