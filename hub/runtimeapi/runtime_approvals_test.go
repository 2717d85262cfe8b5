package runtimeapi_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// runtimeAsker is a remote runtime driven by the test: its workspace is in the
// approval-required mode and its turn is running, so the test asks as the runtime.
type runtimeAsker struct {
	h      *hubtest.Hub
	id     string
	token  string
	turnID string
}

const askerSession = "session-asker-0001"

// startAsker brings a fake machine's workspace to a running turn.
func startAsker(t *testing.T, opts ...hubtest.Option) *runtimeAsker {
	t.Helper()
	h := hubtest.StartProcessHub(t, append([]hubtest.Option{fakeMachine(t)}, opts...)...)
	a := &runtimeAsker{h: h, id: hubtest.CreateOn(t, h, "process", "first", "runtimeMode", "approval-required")}
	a.token = machineToken(t, h, a.id)
	a.call(t, "/hello", nil).expect(t, 200)
	a.call(t, "/ready", nil).expect(t, 204)
	hubtest.WaitFor(t, h, a.id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
	turn := a.call(t, "/next", map[string]any{"waitSeconds": 0}).expect(t, 200).Body
	a.turnID, _ = turn["turnId"].(string)
	return a
}

type runtimeResponse struct{ *hubtest.Response }

func (r runtimeResponse) expect(t *testing.T, status int) *hubtest.Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("expected %d from the runtime API, got %d %s", status, r.Status, r.Raw)
	}
	return r.Response
}

func (a *runtimeAsker) call(t *testing.T, path string, body any) runtimeResponse {
	t.Helper()
	return runtimeResponse{a.h.Call("POST", "/internal/runtime/v1"+path, a.token, body, "X-Wshub-Runtime-Session", askerSession)}
}

// ask asks for approval of key, waiting up to wait seconds.
func (a *runtimeAsker) ask(t *testing.T, key string, wait int) map[string]any {
	t.Helper()
	return a.call(t, "/turns/"+a.turnID+"/approvals", map[string]any{"key": key, "tool": "bash", "summary": "rm -rf " + key,
		"waitSeconds": wait}).expect(t, 200).Body
}

func TestARuntimeAskWithoutWaitingIsAnsweredAtOnce(t *testing.T) {
	t.Parallel()
	a := startAsker(t, hubtest.WithConfig(func(c *hub.Config) { c.ApprovalTimeout = 10 * time.Second }))
	for _, key := range []string{"first", "first"} { // a new ask, then the same one asked again
		start := time.Now()
		got := a.ask(t, key, 0)
		if took := time.Since(start); got["status"] != "pending" || took > 3*time.Second {
			t.Fatalf("expected %q answered pending at once, got %v after %s", key, got, took)
		}
	}
}

func TestADecisionAfterExpiryLeavesTheApprovalTimedOut(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	a := startAsker(t, hubtest.WithClock(clock))
	asked := a.ask(t, "late", 1)
	if asked["status"] != "pending" {
		t.Fatalf("expected the ask pending, got %v", asked)
	}
	clock.Advance(core.DefaultApprovalTimeout + time.Second)
	id := asked["approvalId"].(string)
	hubtest.Decide(t, a.h, a.id, id, "allow", 409, "approval_not_pending")

	var status string
	if err := a.h.PG().DB().Get(&status, `SELECT status FROM approvals WHERE id = $1`, id); err != nil || status != "timed_out" {
		t.Fatalf("expected the refused late decision to leave the approval timed_out, got %q (%v)", status, err)
	}
	var resolved []string
	for _, e := range hubtest.EventsPage(t, a.h, a.id, 0) {
		if e.Type == "approval_resolved" {
			resolved = append(resolved, e.Status)
		}
	}
	if strings.Join(resolved, ",") != "timed_out" {
		t.Fatalf("expected one approval_resolved event, timed_out, got %q", resolved)
	}
	if again := a.ask(t, "late", 0); again["status"] != "timed_out" || again["allow"] != false {
		t.Fatalf("expected the runtime told of the timeout, got %v", again)
	}
}

func TestAsksPastTheTurnCapAreDeniedSayingTheCapWasReached(t *testing.T) {
	t.Parallel()
	a := startAsker(t, hubtest.WithConfig(func(c *hub.Config) { c.ApprovalTimeout = 3 * time.Second }))
	var wg sync.WaitGroup
	for i := range core.MaxApprovalsPerTurn + 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := a.call(t, "/turns/"+a.turnID+"/approvals", map[string]any{"key": fmt.Sprintf("step-%d", i), "tool": "bash",
				"summary": "ls", "waitSeconds": 0})
			if r.Status != 200 {
				t.Errorf("expected ask %d taken, got %d %s", i, r.Status, r.Raw)
			}
		}()
	}
	wg.Wait()
	// Asked all at once, they were still counted one after another. (On a loaded
	// machine some may have timed out already: they were asked all the same.)
	var n int
	if err := a.h.PG().DB().Get(&n, `SELECT count(*) FROM approvals WHERE status IN ('pending', 'timed_out')`); err != nil || n != core.MaxApprovalsPerTurn {
		t.Fatalf("expected exactly %d asks recorded, got %d (%v)", core.MaxApprovalsPerTurn, n, err)
	}
	got := a.ask(t, "one-too-many", 0)
	if got["status"] != "denied" || got["allow"] != false || got["reason"] != core.ReasonApprovalLimit {
		t.Fatalf("expected the ask past the cap denied with %q, got %v", core.ReasonApprovalLimit, got)
	}
	if strings.Contains(fmt.Sprint(got["reason"]), "person") {
		t.Fatalf("expected no person named in the cap's denial, got %v", got["reason"])
	}
}
