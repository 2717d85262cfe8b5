package limits_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// tenant is one account's key, for the tests where two accounts share a hub.
type tenant struct {
	h   *hubtest.Hub
	key string
}

func (a tenant) create(t *testing.T, prompt string) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "test-model"}
	if prompt != "" {
		body["prompt"] = prompt
	}
	r := a.h.Call("POST", "/v1/api/workspaces", a.key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["workspaceId"].(string)
}

func (a tenant) send(t *testing.T, id, text string) {
	t.Helper()
	a.h.Call("POST", "/v1/api/workspaces/"+id+"/messages", a.key, map[string]any{"text": text}).Expect(t, 200, "")
}

// deliveries are the times the workspace's user messages went to the agent, by seq
// (the database's clock: comparable across workspaces); undelivered ones are absent.
func (a tenant) deliveries(t *testing.T, id string) map[int]int64 {
	t.Helper()
	r := a.h.Call("GET", "/v1/api/workspaces/"+id+"/messages", a.key, nil).Expect(t, 200, "")
	out := map[int]int64{}
	for _, raw := range r.Body["messages"].([]any) {
		m := raw.(map[string]any)
		if at, ok := m["deliveredAt"].(float64); ok && m["role"] == "user" {
			out[int(m["seq"].(float64))] = int64(at)
		}
	}
	return out
}

// waitUntil polls the workspace as a until cond holds (2 minutes at most).
func (a tenant) waitUntil(t *testing.T, id, what string, cond func(ws map[string]any) bool) {
	t.Helper()
	eventually.NoError(t, 2*time.Minute, "workspace "+id+": "+what, func() error {
		r := a.h.Call("GET", "/v1/api/workspaces/"+id, a.key, nil)
		if r.Status != 200 {
			return fmt.Errorf("status %d", r.Status)
		}
		if last := r.Body["workspace"].(map[string]any); !cond(last) {
			return fmt.Errorf("seen %v", last)
		}
		return nil
	})
}

func working(ws map[string]any) bool { return ws["agentStatus"] == "working" }

// With 2 slots, account A keeps both busy with 3-second turns and a
// backlog of five more messages in each workspace. B's one-line turn, sent just after,
// gets the first slot that frees; before, it waited behind all of one of A's backlogs
// (six turns: 15 s and more). What is asserted does not depend on the machine's speed:
// how many of A's turns started before B's did.
func TestAFreedSlotGoesToTheAccountThatWaits(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxActiveWorkspaces = 2 }))
	a := tenant{h, h.Key}
	bAcct, bKey := h.NewAccount(true)
	h.NewProject(bAcct.ID, hubtest.GitRepo(t))
	b := tenant{h, bKey}

	// B's workspace is ready and idle before A's load begins.
	bws := b.create(t, "")
	b.waitUntil(t, bws, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })

	aws := []string{a.create(t, "sleep 3"), a.create(t, "sleep 3")}
	for _, id := range aws {
		a.waitUntil(t, id, "its first turn started", func(map[string]any) bool { return len(a.deliveries(t, id)) == 1 })
	}
	for _, id := range aws {
		for range 5 {
			a.send(t, id, "sleep 3")
		}
	}
	sent := time.Now()
	b.send(t, bws, "write b")
	// A's turns that started before B's message existed are not the case: on a loaded
	// machine the ten sends above can outlast A's first turns, whose next ones then
	// rightly start before B's. Counted from here on.
	startedAlready := 0
	for _, id := range aws {
		startedAlready += len(a.deliveries(t, id))
	}
	b.waitUntil(t, bws, "B's turn answered", func(ws map[string]any) bool {
		lt, _ := ws["lastTurn"].(map[string]any)
		return lt != nil && lt["outcome"] == "completed"
	})
	waited := time.Since(sent)

	bAt := b.deliveries(t, bws)[1]
	before := 0
	for _, id := range aws {
		for _, at := range a.deliveries(t, id) {
			if at < bAt {
				before++
			}
		}
	}
	after := before - startedAlready
	t.Logf("B's one-line turn was answered %v after it was sent; %d of A's turns started before it, %d of them after B's message was sent",
		waited.Round(time.Millisecond), before, after)
	// At most one of A's after B's message: when both of A's running turns end at once,
	// the workspace that sees B's already claimed keeps its slot.
	if after > 1 {
		t.Fatalf("expected B's turn to take the first slot A's running turns free, but %d of A's turns started before it after it was sent", after)
	}
}

// An account at its quota of running turns waits for one of them to end, while
// another account's turn takes a free slot at once.
func TestRunningTurnsQuotaHoldsAnAccountsTurnsBack(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t) // 4 slots
	if _, err := h.Service.Admin.UpdateAccount(context.Background(), h.Account.ID, core.AccountUpdate{MaxRunningTurns: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	a := tenant{h, h.Key}
	bAcct, bKey := h.NewAccount(true)
	h.NewProject(bAcct.ID, hubtest.GitRepo(t))
	b := tenant{h, bKey}

	ids := []string{a.create(t, "sleep 60"), a.create(t, "sleep 60")}
	// Whichever starts first runs; the other waits with its message undelivered, and
	// B's turn runs beside the first.
	var running, waiting string
	eventually.Within(2*time.Minute, func() bool {
		for i, id := range ids {
			if len(a.deliveries(t, id)) > 0 {
				running, waiting = id, ids[1-i]
			}
		}
		return running != ""
	})
	if running == "" {
		t.Fatal("expected one of A's turns to start within 2 minutes")
	}
	a.waitUntil(t, waiting, "ready, its turn waiting", func(ws map[string]any) bool { return ws["state"] == "ready" })
	other := b.create(t, "write b")
	b.waitUntil(t, other, "B's turn answered", func(ws map[string]any) bool {
		lt, _ := ws["lastTurn"].(map[string]any)
		return lt != nil && lt["outcome"] == "completed"
	})
	if got := a.deliveries(t, waiting); len(got) != 0 {
		t.Fatalf("expected A's second turn to wait while its first runs (quota 1), but it started: %v", got)
	}
	// The first ends (stopped): the second starts.
	r := a.h.Call("GET", "/v1/api/workspaces/"+running+"/messages", a.key, nil).Expect(t, 200, "")
	turn := r.Body["messages"].([]any)[0].(map[string]any)["turnId"].(string)
	a.h.Call("POST", "/v1/api/workspaces/"+running+"/turns/"+turn+"/stop", a.key, nil).Expect(t, 202, "")
	a.waitUntil(t, waiting, "its turn started", working)
}
