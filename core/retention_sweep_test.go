package core_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/coretest"
)

// createWithKey creates a workspace of c's account with prompt, under an idempotency
// key; created is false on a replay.
func createWithKey(t *testing.T, c *coretest.Core, prompt, key string) (*core.Workspace, bool) {
	t.Helper()
	agent, model := "agent_1", "test-model"
	ws, created, err := c.Workspaces.CreateWorkspace(context.Background(), c.Account,
		core.CreateWorkspaceInput{Agent: &agent, Model: &model, Prompt: &prompt, HeaderKey: &key})
	if err != nil {
		t.Fatalf("create with key %s: %v", key, err)
	}
	return ws, created
}

// The retention sweep deletes what is older than the period and settled (receipts,
// delivered webhook deliveries and the events they leave, its own old ticks), keeps
// what is younger or still pending however old, and runs once per tick.
func TestRetentionDeletesWhatIsPastItsTimeAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	c := coretest.New(t)
	ctx := context.Background()
	c.AddWebhook(c.Account)
	start := c.Clock.Now().Truncate(time.Hour)
	if p, err := c.Sweeps.SweepRetention(ctx, core.MinRetention, start); err != nil || p.Total() != 0 {
		t.Fatalf("expected a first sweep to prune nothing, got %+v (%v)", p, err)
	}

	// Old: a receipt, a delivered delivery, and a pending one.
	old, _ := createWithKey(t, c, "old", "old")
	c.Settle()
	if n := len(c.Deliver()); n != 1 {
		t.Fatalf("expected the old turn's event delivered, got %d", n)
	}
	c.Send(c.Account, old.ID, "old, never delivered")
	c.Settle()

	c.Clock.Advance(20 * 24 * time.Hour)
	young, _ := createWithKey(t, c, "young", "young")
	c.Settle()
	c.Clock.Advance(11 * 24 * time.Hour) // the old rows are 31 days old, the young 11

	tick := c.Clock.Now().Truncate(time.Hour)
	p, err := c.Sweeps.SweepRetention(ctx, core.MinRetention, tick)
	if want := (core.Pruned{Receipts: 1, WebhookDeliveries: 1, Events: 1, CronRuns: 1}); err != nil || p != want {
		t.Fatalf("expected %+v pruned, got %+v (%v)", want, p, err)
	}
	if p, err := c.Sweeps.SweepRetention(ctx, core.MinRetention, tick); err != nil || p.Total() != 0 {
		t.Fatalf("expected the same tick again to prune nothing, got %+v (%v)", p, err)
	}
	// Kept: the young receipt still replays, and both pending deliveries (the old
	// one, and the young turn's) are still delivered.
	if ws, created := createWithKey(t, c, "young", "young"); created || ws.ID != young.ID {
		t.Fatalf("expected the young key to replay workspace %s, got %s (created %v)", young.ID, ws.ID, created)
	}
	var turns []string
	for _, e := range decodeEvents(t, c.Deliver()) {
		turns = append(turns, e.Reply.Text)
	}
	slices.Sort(turns)
	if want := []string{"echo: old, never delivered", "echo: young"}; !slices.Equal(turns, want) {
		t.Fatalf("expected the two pending deliveries kept and delivered, %q, got %q", want, turns)
	}
	if _, err := c.Sweeps.SweepRetention(ctx, core.MinRetention-time.Hour, tick.Add(time.Hour)); err == nil {
		t.Fatal("expected a period under the minimum refused")
	}
}
