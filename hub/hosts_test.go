package hub_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// Hubs on two hosts share one database and no disk: a local workspace lives on the
// host whose data directory holds its checkout.

// hostsTenant is a hub with the tenant (account, key, ready project) and no jobs: the
// hubs of the hosts are built beside it (OnHost).
func hostsTenant(t *testing.T) *hubtest.Hub {
	t.Helper()
	return hubtest.Start(t, hubtest.WithAgentCommand("agent_1", waitingAgent))
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

	id := createWorkspace(t, a, "first")
	if got := hostOf(t, a, id); got != "hub-a" {
		t.Fatalf("expected the workspace created on hub-a recorded on hub-a, got %q", got)
	}
	waitFor(t, b, id, "idle after its first turn", idleAfterTurns(1))
	if !checkoutOn(a, id) || checkoutOn(b, id) {
		t.Fatalf("expected the checkout on hub-a's disk only (hub-a %v, hub-b %v)", checkoutOn(a, id), checkoutOn(b, id))
	}

	stopA()
	send(t, b, id, "second")
	// hub-b's worker claims and runs a workspace of its own after the message was
	// queued: the claims that took it passed hub-a's workspace by.
	own := createWorkspace(t, b, "own")
	waitFor(t, b, own, "hub-b's own workspace idle after its first turn", idleAfterTurns(1))
	if got := hostOf(t, b, own); got != "hub-b" || !checkoutOn(b, own) {
		t.Fatalf("expected hub-b's workspace on hub-b (host %q, checkout %v)", got, checkoutOn(b, own))
	}
	msgs, _ := messages(t, b, id)
	if last := msgs[len(msgs)-1]; last.Text != "second" || last.Status != "pending" || last.DeliveredAt {
		t.Fatalf("expected the message to hub-a's workspace still pending with hub-a's worker stopped, got %+v", last)
	}
	if checkoutOn(b, id) {
		t.Fatal("expected no checkout of hub-a's workspace on hub-b")
	}

	a.Jobs(t)
	waitFor(t, b, id, "idle after its second turn, run by hub-a", idleAfterTurns(2))
	if got := replies(t, b, id); len(got) != 2 || got[1] != "completed: reply: second" {
		t.Fatalf("expected hub-a to answer the second message, got %q", got)
	}
}
