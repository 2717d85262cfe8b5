package core

import (
	"context"
	"encoding/json"
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

func eventBinding(accountID, eventID string) string {
	return "event:" + accountID + ":" + eventID
}

// emitTurnCompleted writes the turn's event and one pending delivery per endpoint the
// account has now, inside the transaction that records the turn (transactional
// outbox). Endpoints registered later never see this turn. With no endpoint there is
// nothing to deliver and nothing is written.
func (s *Worker) emitTurnCompleted(ctx context.Context, q Queries, ws *Workspace, reply *Message, truncated bool, commit TurnCommit) error {
	ev := &Event{
		ID: EventIDFor(ws.ID, reply.TurnID), AccountID: ws.AccountID, WorkspaceID: ws.ID, TurnID: reply.TurnID,
		Type: EventTurnCompleted, CreatedAt: reply.CreatedAt,
	}
	eb := eventBody{
		eventHead: eventHead{EventID: ev.ID, Type: ev.Type, CreatedAt: ev.CreatedAt.UnixMilli(), WorkspaceID: ws.ID,
			Branch: ws.Branch, TurnID: reply.TurnID},
		Outcome: reply.Outcome, Reply: eventReply{Text: reply.Text, Truncated: truncated},
		MessageID: reply.ID,
	}
	if commit.Committed {
		eb.HeadCommit = commit.SHA
	}
	if commit.Pushed || commit.PushRefused {
		eb.Pushed = &commit.Pushed
	}
	body, err := json.Marshal(eb)
	if err != nil {
		return err
	}
	return s.emitEvent(ctx, q, ws, ev, body)
}

// emitEvent seals body as ev's and writes one pending delivery of it per endpoint
// the account has now (hooks, read by the caller), in the caller's transaction.
func (s *Worker) emitEvent(ctx context.Context, q Queries, ws *Workspace, ev *Event, body []byte) error {
	hooks, err := q.WebhookIDs(ctx, ws.AccountID)
	if err != nil || len(hooks) == 0 {
		return err
	}
	if ev.SealedBody, err = s.seal(body, eventBinding(ev.AccountID, ev.ID)); err != nil {
		return err
	}
	if err := q.InsertEvent(ctx, ev); err != nil {
		return err
	}
	ds := make([]*Delivery, len(hooks))
	for i, h := range hooks {
		ds[i] = &Delivery{
			ID: NewID(s.rand, PrefixDelivery), AccountID: ws.AccountID, WebhookID: h, EventID: ev.ID,
			Status: DeliveryPending, MaxAttempts: MaxDeliveryAttempts, NextAttemptAt: ev.CreatedAt, CreatedAt: ev.CreatedAt,
		}
	}
	if err := q.InsertDeliveries(ctx, ds); err != nil {
		return err
	}
	return q.Notify(ctx, DeliveryChannel, ev.ID)
}
