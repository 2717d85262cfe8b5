package runtimeapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
)

// fakeMachine is a `process` machine whose program only keeps its token: the test then
// speaks the runtime API itself, step by step, as a runtime whose answers get lost would.
func fakeMachine(t *testing.T) hubtest.Option { return hubtest.WithFakeMachine(t) }

func machineToken(t *testing.T, h *hubtest.Hub, id string) string {
	t.Helper()
	return h.MachineToken(t, id)
}

// runtimeCheckout downloads the workspace's branch as its runtime does.
func runtimeCheckout(t *testing.T, h *hubtest.Hub, token, session string) (status int, bundle []byte, head string) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.URL+"/internal/runtime/v1/checkout", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Wshub-Runtime-Session", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	bundle, _ = io.ReadAll(resp.Body)
	return resp.StatusCode, bundle, resp.Header.Get("X-Wshub-Head")
}

func TestRuntimeAPICallsCanBeRepeated(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, fakeMachine(t))
	id := hubtest.CreateOn(t, h, "process", "first")
	token := machineToken(t, h, id)
	call := func(method, path, session string, body any, status int, code string) *hubtest.Response {
		t.Helper()
		r := h.Call(method, "/internal/runtime/v1"+path, token, body, "X-Wshub-Runtime-Session", session)
		if r.Status != status || code != "" && r.Code() != code {
			t.Fatalf("%s %s as %s: expected %d %s, got %d %s", method, path, session, status, code, r.Status, r.Raw)
		}
		return r
	}
	s1, s2 := "session-one-0001", "session-two-0002"

	if st := call("POST", "/hello", s1, nil, 200, "").Body["state"]; st != "setup" {
		t.Fatalf("expected hello to move the workspace to setup, got %v", st)
	}
	call("POST", "/hello", s1, nil, 200, "") // a lost answer, asked again: nothing changes
	status, bundle, head := runtimeCheckout(t, h, token, s1)
	if status != 200 || !strings.HasPrefix(string(bundle), "# v2 git bundle") || len(head) != 40 {
		t.Fatalf("expected a git bundle and its head, got %d %.40q %q", status, bundle, head)
	}
	call("POST", "/ready", s1, nil, 204, "")
	call("POST", "/ready", s1, nil, 204, "")
	ws := hubtest.WaitFor(t, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
	if ws["runtimeState"] != "online" {
		t.Fatalf("expected the runtime online, got %v", ws["runtimeState"])
	}

	turn := call("POST", "/next", s1, map[string]any{"waitSeconds": 0}, 200, "").Body
	if turn["prompt"] != "first" {
		t.Fatalf("expected the first message as the turn, got %v", turn)
	}
	again := call("POST", "/next", s1, map[string]any{"waitSeconds": 0}, 200, "").Body
	if again["turnId"] != turn["turnId"] {
		t.Fatalf("expected the lost turn handed again, got %v then %v", turn, again)
	}
	report := map[string]any{"outcome": "completed", "reply": "done first", "sessionId": "agent-session-1"}
	path := "/turns/" + turn["turnId"].(string)
	if r := call("POST", path, s1, report, 200, ""); r.Body["recorded"] != true {
		t.Fatalf("expected the report recorded, got %s", r.Raw)
	}
	if r := call("POST", path, s1, report, 200, ""); r.Body["recorded"] != false {
		t.Fatalf("expected the repeated report not recorded again, got %s", r.Raw)
	}
	call("POST", "/next", s1, map[string]any{"waitSeconds": 0}, 204, "")
	call("POST", "/next", s1, map[string]any{"waitSeconds": 99}, 400, "invalid_request")
	call("POST", "/turns/"+turn["turnId"].(string), s1, map[string]any{"outcome": "won"}, 400, "invalid_request")

	// A message that arrives during a long poll ends the wait at once.
	done := make(chan map[string]any, 1)
	go func() {
		r := h.Call("POST", "/internal/runtime/v1/next", token, map[string]any{"waitSeconds": 20}, "X-Wshub-Runtime-Session", s1)
		done <- r.Body
	}()
	time.Sleep(300 * time.Millisecond) // sleep: nothing outside the hub marks a long poll as waiting; a message sent before it is answered at once, and the test passes less strictly
	hubtest.Send(t, h, id, "second")
	var second map[string]any
	select {
	case second = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("expected the long poll to end with the new message")
	}
	if second["prompt"] != "second" || second["sessionId"] != "agent-session-1" {
		t.Fatalf("expected the second message with the agent's session, got %v", second)
	}

	// Events of the running turn: a batch sent again, or overlapping, is stored once.
	evPath := "/turns/" + second["turnId"].(string) + "/events"
	step := func(n string) map[string]any {
		return map[string]any{"type": "tool_started", "tool": "bash", "summary": n}
	}
	call("POST", evPath, s1, map[string]any{"first": 0, "events": []any{step("a"), step("b")}}, 204, "")
	call("POST", evPath, s1, map[string]any{"first": 0, "events": []any{step("a"), step("b")}}, 204, "")
	call("POST", evPath, s1, map[string]any{"first": 1, "events": []any{step("b"), step("c")}}, 204, "")
	call("POST", evPath, s1, map[string]any{"first": 0, "events": []any{}, "extra": 1}, 400, "invalid_json")
	var summaries []string
	for _, e := range hubtest.EventsPage(t, h, id, 0) {
		if e.TurnID == second["turnId"] {
			summaries = append(summaries, e.Summary)
		}
	}
	if strings.Join(summaries, ",") != "a,b,c" {
		t.Fatalf("expected the turn's events a,b,c once each, got %q", summaries)
	}

	// A new runtime process: the turn its predecessor held ends interrupted, and the
	// predecessor can record nothing.
	call("POST", "/hello", s2, nil, 200, "")
	call("POST", "/next", s1, map[string]any{"waitSeconds": 0}, 409, "runtime_superseded")
	call("POST", "/turns/"+second["turnId"].(string), s1, report, 409, "runtime_superseded")
	got := hubtest.Replies(t, h, id)
	if len(got) != 2 || got[0] != "completed: done first" || !strings.HasPrefix(got[1], "interrupted: ") {
		t.Fatalf("expected one completed and one interrupted turn, got %q", got)
	}
	call("POST", "/heartbeat", s2, nil, 200, "")
	call("GET", "/attachments/asset_0000000000000000", s2, nil, 404, "api_asset_not_found")
	call("POST", "/nope", s2, nil, 404, "not_found")
}

// A runtime that cannot make its checkout says so, and the workspace fails with its
// reason instead of its machine restarting for ever.
func TestRuntimeSetupFailureFailsTheWorkspace(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, fakeMachine(t))
	id := hubtest.CreateOn(t, h, "process", "first")
	token := machineToken(t, h, id)
	call := func(path string, body any, status int, code string) {
		t.Helper()
		r := h.Call("POST", "/internal/runtime/v1"+path, token, body, "X-Wshub-Runtime-Session", "session-one-0001")
		if r.Status != status || code != "" && r.Code() != code {
			t.Fatalf("%s: expected %d %s, got %d %s", path, status, code, r.Status, r.Raw)
		}
	}
	call("/hello", nil, 200, "")
	call("/setup-failed", map[string]any{"detail": "the checkout could not be made on the machine: disk full"}, 204, "")
	ws := hubtest.WaitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	if ws["statusCode"] != "setup_failed:checkout" || !strings.Contains(fmt.Sprint(ws["statusDetail"]), "disk full") {
		t.Fatalf("expected setup_failed:checkout saying why, got %v %v", ws["statusCode"], ws["statusDetail"])
	}
	msgs, _ := hubtest.Messages(t, h, id)
	if len(msgs) != 1 || msgs[0].Status != "failed" {
		t.Fatalf("expected the first message failed with the workspace, got %+v", msgs)
	}
	call("/ready", nil, 401, "runtime_token_invalid") // the machine's token went with it
}
