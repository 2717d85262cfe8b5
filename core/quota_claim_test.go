package core_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// quotasAndFairClaims: an account at a limit is refused with its code or held back,
// and the worker's slots are shared across accounts. Each case has accounts of its own.
var quotasAndFairClaims = []coretest.Case{
	{Name: "an account at its workspace quota is refused, another is not", Test: workspaceQuota},
	{Name: "a workspace at its open-message quota refuses a message without storing it", Test: openMessageQuota},
	{Name: "an account at its running-turns quota waits while another's turn is claimed", Test: runningTurnsQuota},
	{Name: "a claim shares its slots across accounts", Test: fairClaim},
}

func ptr(n int) *int { return &n }

// tenant is a new account with a ready project of its own.
func tenant(c *coretest.Core) *core.Account {
	a := c.NewAccount()
	c.NewProject(a.ID, core.AddProjectInput{})
	return a
}

// readyWorkspaces creates n idle workspaces of acct and steps them to ready.
func readyWorkspaces(t *testing.T, c *coretest.Core, acct *core.Account, n int) []*core.Workspace {
	t.Helper()
	var out []*core.Workspace
	for range n {
		out = append(out, c.Create(acct, ""))
	}
	c.Settle()
	return out
}

// sendEach sends a message to each of acct's workspaces.
func sendEach(c *coretest.Core, acct *core.Account, wss []*core.Workspace) {
	for _, ws := range wss {
		c.Send(acct, ws.ID, "work")
	}
}

// ids are the ids of workspaces, sorted.
func ids(ws []*core.Workspace) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	slices.Sort(out)
	return out
}

// released lets go of claimed workspaces and answers every message waiting, so the
// next case starts from an idle database.
func released(c *coretest.Core, claimed []*core.Workspace) {
	for _, ws := range claimed {
		c.Release(ws)
	}
	c.Settle()
}

func workspaceQuota(t *testing.T, c *coretest.Core) {
	a := c.SetQuotas(tenant(c).ID, core.AccountUpdate{MaxWorkspaces: ptr(2)})
	c.Create(a, "")
	c.Create(a, "")
	_, err := c.TryCreate(a, "")
	if core.ErrorCode(err) != core.CodeQuotaExceeded || !strings.Contains(err.Error(), "limit is 2") ||
		!strings.Contains(err.Error(), "--max-workspaces") {
		t.Fatalf("expected the third workspace refused %s naming the limit and how to raise it, got %v", core.CodeQuotaExceeded, err)
	}
	if ws, err := c.Workspaces.ListWorkspaces(context.Background(), a); err != nil || len(ws) != 2 {
		t.Fatalf("expected 2 workspaces stored, got %d (%v)", len(ws), err)
	}
	c.Create(tenant(c), "") // another account is not held back
	c.Settle()
}

func openMessageQuota(t *testing.T, c *coretest.Core) {
	a := c.SetQuotas(tenant(c).ID, core.AccountUpdate{MaxOpenMessages: ptr(2)})
	ws := c.Create(a, "one")
	c.Send(a, ws.ID, "two")
	for range 2 { // again with its key: still refused, still not stored
		if _, err := c.TrySend(a, ws.ID, "three", "k-three"); core.ErrorCode(err) != core.CodeQuotaExceeded {
			t.Fatalf("expected the third open message refused %s, got %v", core.CodeQuotaExceeded, err)
		}
	}
	if got := conversation(c.Messages(a, ws.ID)); got != "user:one:pending user:two:pending" {
		t.Fatalf("expected the refused message not stored, got %s", got)
	}
	c.Settle()
	c.Send(a, ws.ID, "three") // answered: room again
	c.Settle()
}

// A's turns wait while it has as many running as its quota (1); B's is claimed
// beside A's first, and A's second once the first lets go.
func runningTurnsQuota(t *testing.T, c *coretest.Core) {
	a := c.SetQuotas(tenant(c).ID, core.AccountUpdate{MaxRunningTurns: ptr(1)})
	b := tenant(c)
	as, bs := readyWorkspaces(t, c, a, 2), readyWorkspaces(t, c, b, 1)
	sendEach(c, a, as)
	sendEach(c, b, bs)
	claimed := c.Claim(10)
	var ofA, ofB []*core.Workspace
	for _, ws := range claimed {
		if ws.AccountID == a.ID {
			ofA = append(ofA, ws)
		} else {
			ofB = append(ofB, ws)
		}
	}
	if len(ofA) != 1 || len(ofB) != 1 {
		t.Fatalf("expected one turn of A (its quota) and B's claimed, got %d of A and %d of B", len(ofA), len(ofB))
	}
	if more := c.Claim(10); len(more) != 0 {
		t.Fatalf("expected A's second turn held back while its first runs, got %v claimed", ids(more))
	}
	c.Run(ofA[0])
	next := c.Claim(10)
	if len(next) != 1 || next[0].AccountID != a.ID || next[0].ID == ofA[0].ID {
		t.Fatalf("expected A's second turn claimed once its first ended, got %v", ids(next))
	}
	released(c, append(next, ofB...))
}

// A has three workspaces waiting and B one, queued after all of A's: a claim of two
// takes one of each (the oldest first would take two of A's), and a worker holding B's
// is told to yield its slot to A, which waits, while A's holder is not (no other
// account waits).
func fairClaim(t *testing.T, c *coretest.Core) {
	a, b := tenant(c), tenant(c)
	as := readyWorkspaces(t, c, a, 3)
	c.Clock.Advance(time.Second) // B's is the newest, whatever the ids
	bs := readyWorkspaces(t, c, b, 1)
	sendEach(c, a, as)
	c.Clock.Advance(time.Second)
	sendEach(c, b, bs)
	claimed := c.Claim(2)
	accounts := map[string]int{}
	for _, ws := range claimed {
		accounts[ws.AccountID]++
	}
	if accounts[a.ID] != 1 || accounts[b.ID] != 1 {
		t.Fatalf("expected one workspace of each account claimed, got %d of A and %d of B", accounts[a.ID], accounts[b.ID])
	}
	for _, ws := range claimed {
		yield, err := c.Worker.ShouldYield(context.Background(), ws)
		if err != nil || yield != (ws.AccountID == b.ID) {
			t.Fatalf("expected only B's holder told to yield (A waits, B does not), got %v for %s's (%v)", yield, ws.AccountID, err)
		}
	}
	released(c, claimed)
}
