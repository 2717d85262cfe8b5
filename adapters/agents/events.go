package agents

import (
	"bytes"
	"encoding/json"

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
const (
	eventsFD     = "3"
	maxEventLine = 64 << 10
)

// eventLines turns the bytes an agent writes into turn events for sink.
type eventLines struct {
	sink func(core.TurnEvent)
	buf  []byte
	skip bool // inside a line too long to keep
}

func newEventLines(sink func(core.TurnEvent)) *eventLines { return &eventLines{sink: sink} }

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
	if len(b) > maxEventLine {
		return
	}
	var e struct {
		Type    string `json:"type"`
		Tool    string `json:"tool"`
		Summary string `json:"summary"`
		Delta   string `json:"delta"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &e) != nil || e.Type == "" {
		return
	}
	l.sink(core.TurnEvent{Type: core.TurnEventType(e.Type), Tool: e.Tool, Summary: e.Summary, Delta: e.Delta})
}

// end takes a last line the agent did not finish with a newline.
func (l *eventLines) end() {
	if !l.skip && len(l.buf) > 0 {
		l.line(l.buf)
	}
	l.buf, l.skip = nil, false
}
