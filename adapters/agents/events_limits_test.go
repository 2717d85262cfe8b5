package agents

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
)

// Past the events a turn keeps, an agent's lines are no longer parsed, but an
// approval ask still is: the agent waits for its answer.
func TestEventLinesStopParsingPastTheCapButStillTakeAsks(t *testing.T) {
	var events, asks int
	l := newEventLines(func(core.TurnEvent) { events++ }, func(core.ApprovalAsk) { asks++ })
	var b strings.Builder
	for i := range core.MaxTurnEvents + 500 {
		fmt.Fprintf(&b, `{"type":"tool_started","tool":"bash","summary":"step %d"}`+"\n", i)
	}
	b.WriteString(`{"type":"approval_requested","id":"a1","tool":"bash","summary":"rm -rf build"}` + "\n")
	if _, err := l.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	l.end()
	if events != core.MaxTurnEvents || asks != 1 {
		t.Fatalf("expected %d events and the ask, got %d events and %d asks", core.MaxTurnEvents, events, asks)
	}
}
