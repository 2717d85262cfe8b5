package replicas_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// Hubs on two hosts share one database and no disk: a local workspace lives on the
// host whose data directory holds its checkout.

// hostsTenant is a hub with the tenant (account, key, ready project) and no jobs: the
// hubs of the hosts are built beside it (OnHost).
func hostsTenant(t *testing.T) *hubtest.Hub {
	t.Helper()
	return hubtest.Start(t, hubtest.WithAgentCommand("agent_1", hubtest.WaitingAgent))
}

// checkoutOn says whether h's data directory holds the workspace's checkout.
func checkoutOn(h *hubtest.Hub, id string) bool {
	_, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", id, "checkout"))
	return err == nil
}

func hostOf(t *testing.T, h *hubtest.Hub, id string) string {
	t.Helper()
	var host *string
	if err := h.PG().DB().Get(&host, `SELECT host FROM workspaces WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if host == nil {
		return ""
	}
	return *host
}

// A local workspace created on hub-a is recorded on hub-a and run there only: with
// hub-a's worker stopped, hub-b's worker, busy with a workspace of its own, never
// takes its message; hub-a's, started again, does.
func TestALocalWorkspaceIsSteppedOnlyByTheHubsOfItsHost(t *testing.T) {
	t.Parallel()
	tenant := hostsTenant(t)
	a := tenant.OnHost(t, "hub-a")
	stopA := a.Jobs(t)
	b := tenant.OnHost(t, "hub-b")
	b.Jobs(t)

	id := hubtest.CreateWorkspace(t, a, "first")
	if got := hostOf(t, a, id); got != "hub-a" {
		t.Fatalf("expected the workspace created on hub-a recorded on hub-a, got %q", got)
	}
	if ws := hubtest.WaitFor(t, b, id, "idle after its first turn", hubtest.IdleAfterTurns(1)); ws["host"] != "hub-a" {
		t.Fatalf("expected the status to name host hub-a, got %v", ws["host"])
	}
	if !checkoutOn(a, id) || checkoutOn(b, id) {
		t.Fatalf("expected the checkout on hub-a's disk only (hub-a %v, hub-b %v)", checkoutOn(a, id), checkoutOn(b, id))
	}

	stopA()
	hubtest.Send(t, b, id, "second")
	// hub-b's worker claims and runs a workspace of its own after the message was
	// queued: the claims that took it passed hub-a's workspace by.
	own := hubtest.CreateWorkspace(t, b, "own")
	hubtest.WaitFor(t, b, own, "hub-b's own workspace idle after its first turn", hubtest.IdleAfterTurns(1))
	if got := hostOf(t, b, own); got != "hub-b" || !checkoutOn(b, own) {
		t.Fatalf("expected hub-b's workspace on hub-b (host %q, checkout %v)", got, checkoutOn(b, own))
	}
	msgs, _ := hubtest.Messages(t, b, id)
	if last := msgs[len(msgs)-1]; last.Text != "second" || last.Status != "pending" || last.DeliveredAt {
		t.Fatalf("expected the message to hub-a's workspace still pending with hub-a's worker stopped, got %+v", last)
	}
	if checkoutOn(b, id) {
		t.Fatal("expected no checkout of hub-a's workspace on hub-b")
	}

	a.Jobs(t)
	hubtest.WaitFor(t, b, id, "idle after its second turn, run by hub-a", hubtest.IdleAfterTurns(2))
	if got := hubtest.Replies(t, b, id); len(got) != 2 || got[1] != "completed: reply: second" {
		t.Fatalf("expected hub-a to answer the second message, got %q", got)
	}
}

// lostHostSettings: hubs that beat every 250 ms, lose a host after 4 s unseen and
// sweep every second.
func lostHostSettings(c *hub.Config) {
	c.HostHeartbeat, c.HostLostAfter, c.SweepEvery = 250*time.Millisecond, 4*time.Second, time.Second
}

// hub-a loses its database in the middle of a turn: hub-b and hub-c, which sweep,
// find it unseen for longer than WSHUB_HOST_LOST_AFTER and fail its local workspaces
// machine_lost, once, naming the host; the running turn ends (its message failed, one
// turn_finished). A process-provider workspace, which has no host, is untouched, and a
// lost host's failed workspace can still be deleted (another hub takes the delete
// on). hub-a back finds its workspace failed, and its worker does not bring it back.
func TestAHostNotSeenForLostAfterHasItsLocalWorkspacesFailedOnce(t *testing.T) {
	t.Parallel()
	tenant := hostsTenant(t)
	px := hubtest.NewProxy(t)
	process := hubtest.WithProcessProvider(t)
	settings := hubtest.WithConfig(lostHostSettings)
	a := tenant.OnHost(t, "hub-a", hubtest.WithStoreProxy(px), process, settings,
		hubtest.WithConfig(func(c *hub.Config) { c.LeaseFor = 2 * time.Second }))
	a.Jobs(t)
	b := tenant.OnHost(t, "hub-b", process, settings)
	b.Jobs(t)
	c := tenant.OnHost(t, "hub-c", process, settings, hubtest.WithRoles(hub.RoleSweeps))
	c.Jobs(t)

	remote := hubtest.CreateOn(t, b, "process", "hello")
	hubtest.WaitFor(t, b, remote, "the process workspace idle after its first turn", hubtest.IdleAfterTurns(1))
	idle := hubtest.CreateWorkspace(t, a, "hello")
	hubtest.WaitFor(t, b, idle, "hub-a's idle workspace after its first turn", hubtest.IdleAfterTurns(1))
	running := hubtest.CreateWorkspace(t, a, "wait for it")
	checkout := filepath.Join(a.Config.DataDir, "workspaces", running, "checkout")
	hubtest.WaitForFile(t, filepath.Join(checkout, ".started"))

	px.Cut()
	cut := time.Now()
	failed := hubtest.WaitFor(t, b, running, "failed: its host lost", func(ws map[string]any) bool { return ws["state"] == "failed" })
	detail, _ := failed["statusDetail"].(string)
	if failed["statusCode"] != "machine_lost" || !strings.HasPrefix(detail, "host hub-a has not been seen since ") {
		t.Fatalf("expected machine_lost naming hub-a, got %v / %q", failed["statusCode"], detail)
	}
	// Its last beat came at most a beat before the cut.
	if since := time.Since(cut); since < 4*time.Second-250*time.Millisecond {
		t.Fatalf("expected hub-a lost only after 4 s unseen, it was failed %s after the cut", since)
	}
	hubtest.WaitFor(t, b, idle, "hub-a's idle workspace failed too", func(ws map[string]any) bool {
		return ws["state"] == "failed" && ws["statusCode"] == "machine_lost"
	})

	// Both sweeping hubs sweep again (a tick of the message sweep each second, run by
	// either), and nothing of the failure is written twice.
	var changedAt time.Time
	if err := b.PG().DB().Get(&changedAt, `SELECT state_changed_at FROM workspaces WHERE id = $1`, running); err != nil {
		t.Fatal(err)
	}
	waitSweeps(t, b, 3)
	var again time.Time
	if err := b.PG().DB().Get(&again, `SELECT state_changed_at FROM workspaces WHERE id = $1`, running); err != nil || !again.Equal(changedAt) {
		t.Fatalf("expected the workspace failed once, at %v; now %v (%v)", changedAt, again, err)
	}
	finished := 0
	for _, e := range hubtest.EventsPage(t, b, running, 0) {
		if e.Type == "turn_finished" {
			finished++
			if e.Outcome != "interrupted" {
				t.Errorf("expected the lost turn to finish interrupted, got %q", e.Outcome)
			}
		}
	}
	if finished != 1 {
		t.Fatalf("expected one turn_finished for the lost turn, got %d", finished)
	}
	msgs, _ := hubtest.Messages(t, b, running)
	if len(msgs) != 1 || msgs[0].Status != "failed" {
		t.Fatalf("expected the running turn's message failed and no reply, got %+v", msgs)
	}
	if ws := workspaceNow(t, b, remote); ws["state"] != "ready" || ws["statusCode"] == "machine_lost" {
		t.Fatalf("expected the process workspace ready, got %v / %v", ws["state"], ws["statusCode"])
	}
	if got := hostOf(t, b, remote); got != "" || workspaceNow(t, b, remote)["host"] != nil {
		t.Fatalf("expected the process workspace on no host, got %q", got)
	}

	// The failed workspace of the lost host is deleted by a hub that is there.
	if _, err := b.Service.Admin.DeleteWorkspace(context.Background(), idle); err != nil {
		t.Fatal(err)
	}
	hubtest.WaitDeleted(t, b, idle)

	// hub-a is back: it beats again, its worker runs a new workspace of its own, and
	// the failed one stays failed, without a reply, whatever its agent did.
	px.Restore()
	hubtest.Touch(t, filepath.Join(checkout, ".go"))
	back := hubtest.CreateWorkspace(t, a, "back")
	hubtest.WaitFor(t, b, back, "hub-a's new workspace idle after its first turn", hubtest.IdleAfterTurns(1))
	ws := workspaceNow(t, b, running)
	if ws["state"] != "failed" || ws["statusCode"] != "machine_lost" {
		t.Fatalf("expected the lost host's workspace still failed, got %v / %v", ws["state"], ws["statusCode"])
	}
	if got := hubtest.Replies(t, b, running); len(got) != 0 {
		t.Fatalf("expected no reply recorded for the lost turn, got %q", got)
	}
}

func workspaceNow(t *testing.T, h *hubtest.Hub, id string) map[string]any {
	t.Helper()
	return h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil).Expect(t, 200, "").Body["workspace"].(map[string]any)
}

// waitSweeps waits until n more ticks of the message sweep have run, on any hub.
func waitSweeps(t *testing.T, h *hubtest.Hub, n int) {
	t.Helper()
	count := func() int {
		var c int
		if err := h.PG().DB().Get(&c, `SELECT count(*) FROM cron_runs WHERE job = 'messages'`); err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := count() + n
	eventually.Eventually(t, time.Minute, fmt.Sprintf("%d more sweeps", n), func() bool { return count() >= want })
}
