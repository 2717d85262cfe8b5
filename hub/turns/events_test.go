package turns_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

func TestTurnEventsAreStoredAndStreamed(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateOn(t, h, "local", "steps 2")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	got := hubtest.EventsPage(t, h, id, 0)
	var lines []string
	for _, e := range got {
		lines = append(lines, e.String())
	}
	want := "tool_started bash step 1|tool_finished bash|tool_started bash step 2|tool_finished bash|text all 2 steps done|turn_finished completed"
	if strings.Join(lines, "|") != want {
		t.Fatalf("expected events %q, got %q", want, strings.Join(lines, "|"))
	}
	turn := hubtest.Replies(t, h, id)
	if len(turn) != 1 || got[0].TurnID == "" {
		t.Fatalf("expected one turn with its events, got %q %v", turn, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq || got[i].TurnID != got[0].TurnID {
			t.Fatalf("expected increasing seqs of one turn, got %v", got)
		}
	}
	if rest := hubtest.EventsPage(t, h, id, got[2].Seq); len(rest) != 3 || rest[0].Seq != got[3].Seq {
		t.Fatalf("expected the page after seq %d to start at %d, got %v", got[2].Seq, got[3].Seq, rest)
	}

	// A stream opened before a turn sees it live; after a dropped connection it
	// resumes from Last-Event-ID with no gap and no duplicate.
	events, drop := hubtest.Stream(t, h, id, strconv.FormatInt(got[len(got)-1].Seq, 10))
	hubtest.Send(t, h, id, "steps 1")
	first := hubtest.UntilTurnFinished(t, events)
	drop()
	hubtest.Send(t, h, id, "steps 3")
	hubtest.WaitFor(t, h, id, "idle after three turns", hubtest.IdleAfterTurns(3))
	events, drop = hubtest.Stream(t, h, id, strconv.FormatInt(first[len(first)-1].Seq, 10))
	defer drop()
	second := hubtest.UntilTurnFinished(t, events)
	all := append(append(got, first...), second...)
	if stored := hubtest.EventsPage(t, h, id, 0); len(stored) != len(all) {
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
	h := hubtest.StartProcessHub(t)
	id := hubtest.CreateOn(t, h, "process", "steps 2")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	var lines []string
	for _, e := range hubtest.EventsPage(t, h, id, 0) {
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
	h := hubtest.StartProcessHub(t)
	// Each provider's agent sleeps a length no other test's does, to find its process.
	for _, c := range []struct{ provider, secs string }{{"local", "36"}, {"process", "37"}} {
		provider, secs := c.provider, c.secs
		t.Run(provider, func(t *testing.T) {
			id := hubtest.CreateOn(t, h, provider, "sleep "+secs)
			hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool {
				return ws["state"] == "ready" && ws["agentStatus"] == "working" && ws["runtimeState"] == "online"
			})
			msgs, _ := hubtest.Messages(t, h, id)
			running := msgs[0].TurnID
			hubtest.Send(t, h, id, "sleep 30")
			hubtest.Send(t, h, id, "after")
			msgs, _ = hubtest.Messages(t, h, id)
			queued := msgs[1].TurnID
			eventually.Eventually(t, time.Minute, "the agent running", func() bool { return hubtest.AgentSleeping(secs) })
			r := h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+queued+"/stop", h.Key, nil).Expect(t, 202, "")
			if r.Body["running"] != false {
				t.Fatalf("expected the queued turn not running, got %s", r.Raw)
			}
			asked := time.Now()
			r = h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+running+"/stop", h.Key, nil).Expect(t, 202, "")
			if r.Body["running"] != true {
				t.Fatalf("expected the first turn running, got %s", r.Raw)
			}
			eventually.Eventually(t, 30*time.Second, "the stopped turn ended", func() bool {
				msgs, _ := hubtest.Messages(t, h, id)
				return slices.ContainsFunc(msgs, func(m hubtest.Msg) bool { return m.Role == "assistant" && m.TurnID == running })
			})
			// The agent would run 30 s: ending long before shows the stop ended it. How
			// soon is not asserted: the machine running the tests may be busy.
			if took := time.Since(asked); took > 15*time.Second {
				t.Fatalf("expected the turn stopped long before the agent's 30 s, took %s", took)
			}
			hubtest.WaitFor(t, h, id, "idle after three turns", hubtest.IdleAfterTurns(3))
			got := hubtest.Replies(t, h, id)
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
	h := hubtest.StartRuntime(t, hubtest.WithoutListen())
	id := hubtest.CreateWorkspace(t, h, "sleep 60")
	var running string
	hubtest.WaitFor(t, h, id, "its turn running", func(map[string]any) bool {
		msgs, _ := hubtest.Messages(t, h, id)
		if len(msgs) > 0 && msgs[0].DeliveredAt {
			running = msgs[0].TurnID
		}
		return running != ""
	})
	asked := time.Now()
	h.Call("POST", "/v1/api/workspaces/"+id+"/turns/"+running+"/stop", h.Key, nil).Expect(t, 202, "")
	ws := hubtest.WaitFor(t, h, id, "the turn ended", hubtest.IdleAfterTurns(1))
	if lt := ws["lastTurn"].(map[string]any); lt["outcome"] != "interrupted" {
		t.Fatalf("expected the turn stopped, got %v", lt)
	}
	// Stopped, not run to its end: the agent would have slept a minute.
	if took := time.Since(asked); took > 30*time.Second {
		t.Fatalf("expected the turn stopped long before its agent's minute was up, it ended after %s", took.Round(time.Second))
	}
}
