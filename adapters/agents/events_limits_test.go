package agents

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

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

// What is read from fd 3 is bounded per second: reading four bursts' worth takes at
// least three bursts' refill time, however fast the writer is. (A lower bound only:
// a slow machine makes it longer, never shorter.)
func TestEventReadsAreBoundedPerSecond(t *testing.T) {
	const rate, burst = 64 << 10, 16 << 10
	data := bytes.Repeat([]byte("x"), 4*burst)
	start := time.Now()
	n, err := io.Copy(io.Discard, newRateReader(bytes.NewReader(data), rate, burst))
	took := time.Since(start)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("expected all %d bytes read, got %d, %v", len(data), n, err)
	}
	if min := time.Duration(3*burst) * time.Second / rate; took < min {
		t.Fatalf("expected reading %d bytes at %d/s (burst %d) to take at least %s, took %s", len(data), rate, burst, min, took)
	}
}
