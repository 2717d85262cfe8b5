package hubtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Event is one event of a workspace's stream or events page, as the API writes it.
type Event struct {
	Seq        int64  `json:"seq"`
	TurnID     string `json:"turnId"`
	Type       string `json:"type"`
	Tool       string `json:"tool"`
	Summary    string `json:"summary"`
	Delta      string `json:"delta"`
	Outcome    string `json:"outcome"`
	ApprovalID string `json:"approvalId"`
	Status     string `json:"status"`
	DecidedBy  string `json:"decidedBy"`
	Decider    *struct {
		Kind, ID, Name string
	} `json:"decider"`
	Input       json.RawMessage `json:"input"`
	InputSHA256 string          `json:"inputSha256"`
	Reason      string          `json:"reason"`
	CreatedAt   int64           `json:"createdAt"`
}

func (e Event) String() string {
	var parts []string
	for _, p := range []string{e.Type, e.Tool, e.Summary, e.Delta, e.Outcome} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// EventsPage reads the JSON form of GET /events.
func EventsPage(t *testing.T, h *Hub, id string, after int64) []Event {
	t.Helper()
	r := h.Call("GET", fmt.Sprintf("/v1/api/workspaces/%s/events?afterSeq=%d", id, after), h.Key, nil).Expect(t, 200, "")
	var page struct{ Events []Event }
	if err := json.Unmarshal(r.Raw, &page); err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// Stream opens the SSE form and returns a channel of its events (closed when the
// stream ends) and a function that drops the connection.
func Stream(t testing.TB, h *Hub, id, lastEventID string) (<-chan Event, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", h.URL+"/v1/api/workspaces/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+h.Key)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("expected an event stream, got %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	out := make(chan Event, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var id, typ string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var e Event
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e) != nil || strconv.FormatInt(e.Seq, 10) != id || e.Type != typ {
					t.Errorf("malformed event: id %q event %q data %q", id, typ, line)
					return
				}
				out <- e
			}
		}
	}()
	return out, cancel
}

// UntilTurnFinished reads events until a turn_finished, failing after a deadline.
func UntilTurnFinished(t *testing.T, events <-chan Event) []Event {
	t.Helper()
	var got []Event
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended after %v", got)
			}
			got = append(got, e)
			if e.Type == "turn_finished" {
				return got
			}
		case <-deadline:
			t.Fatalf("no turn_finished within 30 s; got %v", got)
		}
	}
}

// StreamB is Stream for benchmarks: from the workspace's first event on.
func StreamB(b *testing.B, h *Hub, id string) (<-chan Event, func()) {
	return Stream(b, h, id, "")
}
