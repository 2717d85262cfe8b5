package core

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Turn events: what the agent is doing while a turn runs, as a small typed
// stream the API serves (GET /workspaces/{id}/events, an extension of the contract)
// and chat threads will show. Kept per turn in the store, sealed like message text,
// bounded per turn, and kept like the rest of the conversation.

// TurnEventType is the kind of a turn event.
type TurnEventType string

// Turn event types.
const (
	EventToolStarted  TurnEventType = "tool_started"
	EventToolFinished TurnEventType = "tool_finished"
	// EventToolDenied ends a tool step that did not run: its approval was denied.
	EventToolDenied        TurnEventType = "tool_denied"
	EventText              TurnEventType = "text"
	EventApprovalRequested TurnEventType = "approval_requested"
	// EventApprovalResolved says how an approval ended (an addition to the issue's
	// list: a stream reader learns the turn goes on, and why).
	EventApprovalResolved TurnEventType = "approval_resolved"
	EventTurnFinished     TurnEventType = "turn_finished"
)

// Limits of turn events: an agent is untrusted, what it reports is bounded.
const (
	// MaxTurnEvents is how many events one turn keeps; later ones are dropped (the
	// turn_finished event is always kept).
	MaxTurnEvents = 1000
	maxEventTool  = 100
	// maxEventSummary bounds a tool step's summary (a command line, a file name).
	maxEventSummary = 300
	// maxEventDelta bounds one text event; longer text arrives as several.
	maxEventDelta = 4000
	// eventFlushEvery is how long events wait to be written together.
	eventFlushEvery = 100 * time.Millisecond
)

// EventsChannel is the NOTIFY channel of new turn events; the payload is the
// workspace id.
const EventsChannel = "wshub_events"

// TurnEvent is one step of a turn.
type TurnEvent struct {
	// Seq orders a workspace's events (the SSE event id); set by the store.
	Seq         int64
	WorkspaceID string
	TurnID      string
	Type        TurnEventType
	Tool        string
	Summary     string
	Delta       string
	// Outcome is set on turn_finished.
	Outcome Outcome
	// ApprovalID is set on approval_requested and approval_resolved; Status and
	// DecidedBy on approval_resolved.
	ApprovalID string
	Status     ApprovalStatus
	DecidedBy  string
	// Decider is the person who decided, on approval_resolved (nil: no person).
	Decider *Author
	// Input and InputSHA256 are set on approval_requested: the tool's whole input as
	// shown for the decision (CanonicalInput) and its hash.
	Input       json.RawMessage
	InputSHA256 string
	// Reason is set on an approval_resolved the hub decided without asking anyone.
	Reason    string
	CreatedAt time.Time
}

// turnEventBody is what is sealed: everything but the ids and time, which are columns.
type turnEventBody struct {
	Tool       string         `json:"tool,omitempty"`
	Summary    string         `json:"summary,omitempty"`
	Delta      string         `json:"delta,omitempty"`
	Outcome    Outcome        `json:"outcome,omitempty"`
	ApprovalID string         `json:"approvalId,omitempty"`
	Status     ApprovalStatus `json:"status,omitempty"`
	DecidedBy  string         `json:"decidedBy,omitempty"`
	Decider    *authorBody    `json:"decider,omitempty"`
	// Input is kept as JSON text, not re-encoded: it is the canonical form its hash is of.
	Input       string `json:"input,omitempty"`
	InputSHA256 string `json:"inputSha256,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

// StoredTurnEvent is a turn event as the store keeps it.
type StoredTurnEvent struct {
	Seq         int64
	WorkspaceID string
	TurnID      string
	Type        TurnEventType
	SealedBody  []byte
	CreatedAt   time.Time
}

// TurnEventQueries are the store statements of turn events.
type TurnEventQueries interface {
	// InsertTurnEvents appends events in order (their Seq is assigned in that order).
	InsertTurnEvents(ctx context.Context, events []*StoredTurnEvent) error
	// CountTurnEvents counts a turn's events.
	CountTurnEvents(ctx context.Context, workspaceID, turnID string) (int, error)
	// ListTurnEvents returns a workspace's events after afterSeq, oldest first.
	ListTurnEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*StoredTurnEvent, error)
}

// clean bounds an event's fields and reports whether the event is one the hub keeps.
func (e *TurnEvent) clean() bool {
	switch e.Type {
	case EventToolStarted, EventToolFinished, EventToolDenied, EventText:
	default:
		return false // approval_requested and turn_finished are the hub's own
	}
	e.Tool, _ = capRunes(strings.ToValidUTF8(strings.TrimSpace(e.Tool), "\uFFFD"), maxEventTool)
	e.Summary = cutSummary(e.Summary)
	e.Delta, _ = capRunes(strings.ToValidUTF8(e.Delta, "\uFFFD"), maxEventDelta)
	e.Outcome, e.ApprovalID, e.Status, e.DecidedBy, e.Decider = "", "", "", "", nil
	e.Input, e.InputSHA256, e.Reason = nil, "", ""
	return e.Type != EventText || e.Delta != ""
}

// cleanOutput bounds a line of an environment script's output and reports whether it
// is one (setup_output, the only kind a script run records itself).
func (e *TurnEvent) cleanOutput() bool {
	if e.Type != EventSetupOutput {
		return false
	}
	tool := e.Tool
	e.Delta, _ = capRunes(strings.ToValidUTF8(e.Delta, "\uFFFD"), maxEventDelta)
	*e = TurnEvent{Type: EventSetupOutput, Tool: tool, Delta: e.Delta}
	return e.Delta != ""
}

// sealEvent turns an event into its stored form.
func (s kernel) sealEvent(e *TurnEvent) (*StoredTurnEvent, error) {
	body, err := json.Marshal(turnEventBody{Tool: e.Tool, Summary: e.Summary, Delta: e.Delta, Outcome: e.Outcome,
		ApprovalID: e.ApprovalID, Status: e.Status, DecidedBy: e.DecidedBy, Decider: bodyOfAuthor(e.Decider), Input: string(e.Input),
		InputSHA256: e.InputSHA256, Reason: e.Reason})
	if err != nil {
		return nil, err
	}
	sealed, err := s.seal(body, SealedTurnEvent.binding(e.WorkspaceID, e.TurnID))
	if err != nil {
		return nil, err
	}
	return &StoredTurnEvent{WorkspaceID: e.WorkspaceID, TurnID: e.TurnID, Type: e.Type, SealedBody: sealed, CreatedAt: e.CreatedAt}, nil
}

// openEvent reads a stored event.
func (s kernel) openEvent(st *StoredTurnEvent) (*TurnEvent, error) {
	plain, err := s.open(st.SealedBody, SealedTurnEvent.binding(st.WorkspaceID, st.TurnID))
	if err != nil {
		return nil, err
	}
	var b turnEventBody
	if err := json.Unmarshal([]byte(plain), &b); err != nil {
		return nil, err
	}
	e := &TurnEvent{Seq: st.Seq, WorkspaceID: st.WorkspaceID, TurnID: st.TurnID, Type: st.Type,
		Tool: b.Tool, Summary: b.Summary, Delta: b.Delta, Outcome: b.Outcome, ApprovalID: b.ApprovalID,
		Status: b.Status, DecidedBy: b.DecidedBy, Decider: b.Decider.author(), InputSHA256: b.InputSHA256, Reason: b.Reason,
		CreatedAt: st.CreatedAt}
	if b.Input != "" {
		e.Input = json.RawMessage(b.Input)
	}
	return e, nil
}

// eventRecorder writes a running turn's events as they come, in batches (one
// transaction and one NOTIFY per eventFlushEvery at most), so a chatty agent costs a
// few writes a second, not one per line. Events past MaxTurnEvents are dropped.
type eventRecorder struct {
	rt      *Worker
	ws      string
	turn    string
	mu      sync.Mutex
	pending []*TurnEvent
	// flushing serialises writes (the loop's and sync's), so events keep their order.
	flushing sync.Mutex
	count    int
	// script: the events of an environment script's run (setup_output), not an
	// agent's; each recorder takes only its own kind.
	script bool
	// mask hides the project's secrets in what is recorded (nil: none).
	mask    *Masker
	wake    chan struct{}
	closing chan struct{}
	done    chan struct{}
}

func (s *Worker) recordEvents(ctx context.Context, workspaceID, turnID string) *eventRecorder {
	r := &eventRecorder{rt: s, ws: workspaceID, turn: turnID, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go r.loop(context.WithoutCancel(ctx))
	return r
}

// add takes one event from the agent (from any goroutine). Its texts are masked
// before clean cuts them: a value cut in two would no longer be found, and its head
// would show.
func (r *eventRecorder) add(e TurnEvent) {
	r.maskTexts(&e)
	switch {
	case r.script && !e.cleanOutput(), !r.script && !e.clean():
		return
	}
	r.addOwn(e)
}

// maskTexts masks the project's secrets in e's texts.
func (r *eventRecorder) maskTexts(e *TurnEvent) {
	if r.mask != nil {
		e.Tool, e.Summary, e.Delta, e.Reason = r.mask.Mask(e.Tool), r.mask.Mask(e.Summary), r.mask.Mask(e.Delta), r.mask.Mask(e.Reason)
	}
}

// addOwn takes an event of the hub's own (or one add has cleaned), masking the
// project's secrets in its texts.
func (r *eventRecorder) addOwn(e TurnEvent) {
	r.maskTexts(&e)
	e.WorkspaceID, e.TurnID, e.CreatedAt = r.ws, r.turn, r.rt.clock.Now()
	r.mu.Lock()
	if r.count >= MaxTurnEvents && e.Type != EventSetupFinished {
		r.mu.Unlock()
		return
	}
	r.count++
	r.pending = append(r.pending, &e)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// close writes what is left and stops; the turn is recorded after it.
func (r *eventRecorder) close() {
	close(r.closing)
	<-r.done
}

func (r *eventRecorder) loop(ctx context.Context) {
	defer close(r.done)
	for {
		// The first event of a quiet spell goes at once; then at most one write per
		// eventFlushEvery, while the next events gather.
		select {
		case <-r.wake:
		case <-r.closing:
			r.flush(ctx)
			return
		}
		r.flush(ctx)
		select {
		case <-time.After(eventFlushEvery):
		case <-r.closing:
		}
	}
}

// sync writes what is pending now, before the caller writes an event of its own.
func (r *eventRecorder) sync() {
	if r != nil {
		r.flush(context.Background())
	}
}

func (r *eventRecorder) flush(ctx context.Context) {
	r.flushing.Lock()
	defer r.flushing.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	// Events are a live view: one the store cannot take now is not worth holding the
	// turn for (its reply is what must not be lost).
	// A script run's status is finished by its setup_finished (a turn's, when the turn
	// is recorded).
	finished := false
	for _, e := range batch {
		finished = finished || e.Type == EventSetupFinished
	}
	err := r.rt.store.InTx(ctx, func(q Queries) error {
		return r.rt.in(ctx, q).runningTurnEvents(r.ws, r.turn, finished, batch...)
	})
	if err != nil {
		r.rt.log().Warn("turn events not kept", "workspace", r.ws, "turn", r.turn, "events", len(batch), "err", err)
	}
}

// MaxEventPage is the most events one page of GET /events returns.
const MaxEventPage = 500

// ListTurnEvents returns a workspace's turn events after afterSeq, oldest first (at
// most limit, capped at MaxEventPage).
func (s *Workspaces) ListTurnEvents(ctx context.Context, acct *Account, workspaceID string, afterSeq int64, limit int) ([]*TurnEvent, error) {
	ws, err := accountWorkspace(ctx, s.store, acct, workspaceID)
	if err != nil {
		return nil, notFound(err, CodeWorkspaceNotFound, "no workspace with this id on this account")
	}
	if limit <= 0 || limit > MaxEventPage {
		limit = MaxEventPage
	}
	return s.readEvents(ctx, ws.ID, afterSeq, limit)
}

// readEvents reads and opens a workspace's events after afterSeq, with no account check.
func (s *Workspaces) readEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*TurnEvent, error) {
	rows, err := s.store.ListTurnEvents(ctx, workspaceID, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*TurnEvent, 0, len(rows))
	for _, st := range rows {
		e, err := s.openEvent(st)
		if err != nil {
			return nil, Errorf(CodeSealFailed, "a turn event could not be opened")
		}
		out = append(out, e)
	}
	return out, nil
}
