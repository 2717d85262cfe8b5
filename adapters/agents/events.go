package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"sync"

	"github.com/wshub/wshub/core"
)

// The command-agent event protocol (an extension of design.md's command-agent
// protocol): while it works, a command agent may write one JSON object per line to
// file descriptor 3 (WSHUB_EVENTS_FD names it):
//
//	{"type":"tool_started","tool":"bash","summary":"go test ./..."}
//	{"type":"tool_finished","tool":"bash"}
//	{"type":"text","delta":"Looking at the tests first."}
//
// Lines that are not such objects, and lines over maxEventLine bytes, are skipped.
// The reply is still the standard output.
//
// Approvals: an agent that wants a person's decision before a step writes
//
//	{"type":"approval_requested","id":"rm-build","tool":"bash","summary":"rm -rf build"}
//
// to fd 3 and reads the answer, one line, from file descriptor 4 (WSHUB_DECISIONS_FD):
//
//	{"type":"approval_resolved","id":"rm-build","decision":"allow"}
//	{"type":"approval_resolved","id":"rm-build","decision":"deny","reason":"Denied by a person reviewing this workspace."}
//
// The ask may carry the tool's whole input, "input" (any JSON: an object, a string);
// it is what is shown to whoever decides, whole (up to 64 KiB; a larger one is denied
// without asking). An allow of such an ask carries "sha256", the hash of the input
// that was shown and approved (sha256 of its canonical JSON, core.CanonicalInput): the
// agent runs that input and nothing else.
//
// The id is the agent's own (asked again with the same id in the same turn, it is the
// same approval). Answers to concurrent asks may come in any order; each names its
// id. Outside the approval-required mode nobody is asked and the answer is deny.
const (
	eventsFD    = "3"
	decisionsFD = "4"
	// maxEventLine is above what an ask with a whole input (core.MaxApprovalInput, as
	// JSON-escaped by the agent) takes, so a too large input reaches the hub and is
	// denied there, with the reason, instead of the ask going unanswered.
	maxEventLine = 1 << 20
)

// eventLines turns the bytes an agent writes into turn events for sink, and approval
// asks into calls of ask.
type eventLines struct {
	sink func(core.TurnEvent)
	ask  func(core.ApprovalAsk)
	buf  []byte
	skip bool // inside a line too long to keep
	// sunk counts the events passed on: past core.MaxTurnEvents, which is all a turn
	// keeps, only approval asks are parsed (the agent waits for their answers).
	sunk int
}

// approvalMarker is what an ask's line holds; other lines past the cap are dropped
// unread.
var approvalMarker = []byte(core.EventApprovalRequested)

func newEventLines(sink func(core.TurnEvent), ask func(core.ApprovalAsk)) *eventLines {
	return &eventLines{sink: sink, ask: ask}
}

func (l *eventLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if !l.skip {
				l.buf = append(l.buf, p...)
				if len(l.buf) > maxEventLine {
					l.buf, l.skip = l.buf[:0], true
				}
			}
			break
		}
		if !l.skip {
			l.line(append(l.buf, p[:i]...))
		}
		l.buf, l.skip = l.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (l *eventLines) line(b []byte) {
	if len(b) > maxEventLine || l.sunk >= core.MaxTurnEvents && !bytes.Contains(b, approvalMarker) {
		return
	}
	var e struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Tool    string          `json:"tool"`
		Summary string          `json:"summary"`
		Delta   string          `json:"delta"`
		Input   json.RawMessage `json:"input"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &e) != nil || e.Type == "" {
		return
	}
	if e.Type == string(core.EventApprovalRequested) {
		if l.ask != nil {
			l.ask(core.ApprovalAsk{Key: e.ID, Tool: e.Tool, Summary: e.Summary, Input: e.Input})
		}
		return
	}
	if l.sink != nil && l.sunk < core.MaxTurnEvents {
		l.sunk++
		l.sink(core.TurnEvent{Type: core.TurnEventType(e.Type), Tool: e.Tool, Summary: e.Summary, Delta: e.Delta})
	}
}

// end takes a last line the agent did not finish with a newline.
func (l *eventLines) end() {
	if !l.skip && len(l.buf) > 0 {
		l.line(l.buf)
	}
	l.buf, l.skip = nil, false
}

// decisions answers a command agent's approval asks on its fd 4. Each ask is decided
// in its own goroutine (a person may take minutes; the agent may ask several things
// at once); answers are written whole, one line each.
type decisions struct {
	ctx     context.Context
	approve func(context.Context, core.ApprovalAsk) core.ApprovalAnswer
	mu      sync.Mutex
	w       *os.File
	wg      sync.WaitGroup
	asked   int
}

// maxCommandAsks bounds the goroutines one turn's asks can start; core bounds what it
// records (MaxApprovalsPerTurn) the same way.
const maxCommandAsks = 2 * core.MaxApprovalsPerTurn

func (d *decisions) ask(ask core.ApprovalAsk) {
	id := ask.Key
	d.mu.Lock()
	d.asked++
	over := d.asked > maxCommandAsks
	d.mu.Unlock()
	switch {
	case d.approve == nil:
		d.answer(id, core.ApprovalAnswer{Reason: "Denied: nobody answers approvals in this runtime mode."})
		return
	case over:
		d.answer(id, core.ApprovalAnswer{Reason: core.ReasonApprovalLimit})
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.answer(id, d.approve(d.ctx, ask))
	}()
}

func (d *decisions) answer(id string, a core.ApprovalAnswer) {
	out := struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Decision string `json:"decision"`
		Reason   string `json:"reason,omitempty"`
		SHA256   string `json:"sha256,omitempty"`
	}{Type: string(core.EventApprovalResolved), ID: id, Decision: core.DecisionDeny, Reason: a.Reason}
	if a.Allow {
		out.Decision, out.SHA256 = core.DecisionAllow, a.InputSHA256
	}
	line, _ := json.Marshal(out)
	d.mu.Lock()
	defer d.mu.Unlock()
	// An agent that is gone (EPIPE) or not reading: nothing to tell.
	_, _ = d.w.Write(append(line, '\n'))
}

// close waits for the asks in flight (their context has ended) and closes the pipe.
func (d *decisions) close() {
	d.wg.Wait()
	_ = d.w.Close()
}
