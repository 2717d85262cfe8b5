package hub_test

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

	"github.com/wshub/wshub/hub/hubtest"
)

type sseEvent struct {
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

func (e sseEvent) String() string {
	var parts []string
	for _, p := range []string{e.Type, e.Tool, e.Summary, e.Delta, e.Outcome} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// eventsPage reads the JSON form of GET /events.
func eventsPage(t *testing.T, h *hubtest.Hub, id string, after int64) []sseEvent {
	t.Helper()
	r := h.Call("GET", fmt.Sprintf("/v1/api/workspaces/%s/events?afterSeq=%d", id, after), h.Key, nil).Expect(t, 200, "")
	var page struct{ Events []sseEvent }
	if err := json.Unmarshal(r.Raw, &page); err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// stream opens the SSE form and returns a channel of its events (closed when the
// stream ends) and a function that drops the connection.
func stream(t testing.TB, h *hubtest.Hub, id, lastEventID string) (<-chan sseEvent, func()) {
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
	out := make(chan sseEvent, 100)
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
				var e sseEvent
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

// until reads events until a turn_finished, failing after a deadline.
func until(t *testing.T, events <-chan sseEvent) []sseEvent {
	t.Helper()
	var got []sseEvent
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

func TestTurnEventsAreStoredAndStreamed(t *testing.T) {
	t.Parallel()
	h := startRuntime(t)
	id := createOn(t, h, "local", "steps 2")
	waitFor(t, h, id, "idle", idleAfterTurns(1))
	got := eventsPage(t, h, id, 0)
	var lines []string
	for _, e := range got {
		lines = append(lines, e.String())
	}
	want := "tool_started bash step 1|tool_finished bash|tool_started bash step 2|tool_finished bash|text all 2 steps done|turn_finished completed"
	if strings.Join(lines, "|") != want {
		t.Fatalf("expected events %q, got %q", want, strings.Join(lines, "|"))
	}
	turn := replies(t, h, id)
	if len(turn) != 1 || got[0].TurnID == "" {
		t.Fatalf("expected one turn with its events, got %q %v", turn, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq || got[i].TurnID != got[0].TurnID {
			t.Fatalf("expected increasing seqs of one turn, got %v", got)
		}
	}
	if rest := eventsPage(t, h, id, got[2].Seq); len(rest) != 3 || rest[0].Seq != got[3].Seq {
		t.Fatalf("expected the page after seq %d to start at %d, got %v", got[2].Seq, got[3].Seq, rest)
	}

	// A stream opened before a turn sees it live; after a dropped connection it
	// resumes from Last-Event-ID with no gap and no duplicate.
	events, drop := stream(t, h, id, strconv.FormatInt(got[len(got)-1].Seq, 10))
	send(t, h, id, "steps 1")
	first := until(t, events)
	drop()
	send(t, h, id, "steps 3")
	waitFor(t, h, id, "idle after three turns", idleAfterTurns(3))
	events, drop = stream(t, h, id, strconv.FormatInt(first[len(first)-1].Seq, 10))
	defer drop()
	second := until(t, events)
	all := append(append(got, first...), second...)
	if stored := eventsPage(t, h, id, 0); len(stored) != len(all) {
		t.Fatalf("expected the streams to have seen every stored event once: %d stored, %d seen", len(stored), len(all))
	} else {
		for i := range stored {
			if stored[i].Seq != all[i].Seq {
				t.Fatalf("event %d: stored seq %d, streamed %d", i, stored[i].Seq, all[i].Seq)
			}
		}
	}
	if len(first) != 4 || len(second) != 8 {
		t.Fatalf("expected 4 and 8 events for one and three steps, got %v and %v", first, second)
	}

	h.Call("GET", "/v1/api/workspaces/ws_0000000000000000/events", h.Key, nil).Expect(t, 404, "cloud_workspace_not_found")
	h.Call("GET", "/v1/api/workspaces/"+id+"/events?afterSeq=-1", h.Key, nil).Expect(t, 400, "invalid_message_query")
}

// A remote runtime relays its turn's events over the runtime API: the same stream as
// a local turn's.
func TestProcessRuntimeRelaysTurnEvents(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	id := createOn(t, h, "process", "steps 2")
	waitFor(t, h, id, "idle", idleAfterTurns(1))
	var lines []string
	for _, e := range eventsPage(t, h, id, 0) {
		lines = append(lines, e.String())
	}
	want := "tool_started bash step 1|tool_finished bash|tool_started bash step 2|tool_finished bash|text all 2 steps done|turn_finished completed"
	if strings.Join(lines, "|") != want {
		t.Fatalf("expected events %q, got %q", want, strings.Join(lines, "|"))
	}
}

// Stop ends a running turn interrupted, long before its agent would end, on the local
// and the process provider; the workspace's queued messages go on; a turn asked to stop
// before it started ends without running; an ended turn cannot be stopped.
func TestStopEndsATurnAndTheQueueGoesOn(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	for _, provider := range []string{"local", "process"} {
		t.Run(provider, func(t *testing.T) {
			id := createOn(t, h, provider, "sleep 30")
			waitFor(t, h, id, "working", func(ws map[string]any) bool {
				return ws["state"] == "ready" && ws["agentStatus"] == "working" && ws["runtimeState"] == "online"
			})
			msgs, _ := messages(t, h, id)
			running := msgs[0].TurnID
			send(t, h, id, "sleep 30")
			send(t, h, id, "after")
			msgs, _ = messages(t, h, id)
			queued := msgs[1].TurnID
			time.Sleep(500 * time.Millisecond) // the agent is running
			r := h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+queued+"/stop", h.Key, nil).Expect(t, 202, "")
			if r.Body["running"] != false {
				t.Fatalf("expected the queued turn not running, got %s", r.Raw)
			}
			asked := time.Now()
			r = h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+running+"/stop", h.Key, nil).Expect(t, 202, "")
			if r.Body["running"] != true {
				t.Fatalf("expected the first turn running, got %s", r.Raw)
			}
			for ended := false; !ended; {
				msgs, _ := messages(t, h, id)
				for _, m := range msgs {
					ended = ended || m.Role == "assistant" && m.TurnID == running
				}
				if time.Since(asked) > 30*time.Second {
					t.Fatal("the stopped turn did not end")
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The agent would run 30 s: ending long before shows the stop ended it. How
			// soon is not asserted: the machine running the tests may be busy.
			if took := time.Since(asked); took > 15*time.Second {
				t.Fatalf("expected the turn stopped long before the agent's 30 s, took %s", took)
			}
			waitFor(t, h, id, "idle after three turns", idleAfterTurns(3))
			got := replies(t, h, id)
			if len(got) != 3 || !strings.HasPrefix(got[0], "interrupted: ") || got[1] != "interrupted: The turn was stopped before the agent started." ||
				got[2] != "completed: echo: after" {
				t.Fatalf("expected stopped, stopped before it started, then answered; got %q", got)
			}
			h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+running+"/stop", h.Key, nil).Expect(t, 409, "turn_not_running")
			h.Call("POST", "/v1/api/workspaces/"+id+"/turns/turn_0000000000000000/stop", h.Key, nil).Expect(t, 404, "turn_not_found")
			h.Call("POST", "/v1/api/workspaces/"+id+"/turns/nonsense/stop", h.Key, nil).Expect(t, 404, "turn_not_found")
		})
	}
}

// With LISTEN down (no NOTIFY reaches the hub), a stop request still reaches a running
// local turn: the turn polls for it as the workers poll for work, rather than running
// to its end.
func TestStopReachesARunningTurnWithoutListen(t *testing.T) {
	t.Parallel()
	h := startRuntime(t, hubtest.WithoutListen())
	id := createWorkspace(t, h, "sleep 60")
	var running string
	waitFor(t, h, id, "its turn running", func(map[string]any) bool {
		msgs, _ := messages(t, h, id)
		if len(msgs) > 0 && msgs[0].DeliveredAt {
			running = msgs[0].TurnID
		}
		return running != ""
	})
	asked := time.Now()
	h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+running+"/stop", h.Key, nil).Expect(t, 202, "")
	ws := waitFor(t, h, id, "the turn ended", idleAfterTurns(1))
	if lt := ws["lastTurn"].(map[string]any); lt["outcome"] != "interrupted" {
		t.Fatalf("expected the turn stopped, got %v", lt)
	}
	// Stopped, not run to its end: the agent would have slept a minute.
	if took := time.Since(asked); took > 30*time.Second {
		t.Fatalf("expected the turn stopped long before its agent's minute was up, it ended after %s", took.Round(time.Second))
	}
}

// streamB is stream for benchmarks: from the workspace's first event on.
func streamB(b *testing.B, h *hubtest.Hub, id string) (<-chan sseEvent, func()) {
	return stream(b, h, id, "")
}
