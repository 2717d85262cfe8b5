package core

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

// The turn's log line gives its duration in milliseconds, under a name that says so.
func TestTheTurnLogLineGivesItsDurationInMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	w := &Worker{logger: logger{slog.New(slog.NewJSONHandler(&buf, nil))}}
	w.reportTurn(TurnReport{WorkspaceID: "ws_1", TurnID: "turn_1", Took: 1500 * time.Millisecond})
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("expected one JSON line, got %q: %v", buf.String(), err)
	}
	if line["durationMs"] != 1500.0 || line["duration"] != nil {
		t.Fatalf("expected durationMs 1500 and no duration, got %v", line)
	}
}
