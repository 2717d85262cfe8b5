package webhooks_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// retentionRows writes, at the clock's now, one row of each kind the retention sweep
// looks at, named by status and tag ("old" or "young"), beside a workspace created
// through the API with idempotency key tag (so its receipt has the same age).
func retentionRows(t *testing.T, h *hubtest.Hub, at time.Time, tag string, hooks [2]string) {
	t.Helper()
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "prompt": "hi"},
		"Idempotency-Key", tag).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	stmts := []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO chat_inbox (platform, event_id, thread_key, payload_sealed, status, next_attempt_at, received_at)
			SELECT 'slack', s || '-' || $2, 'T1/C1/' || $2, '\x00', s, $1, $1 FROM unnest(ARRAY['pending', 'done', 'failed']) s`, []any{at, tag}},
		{`INSERT INTO chat_threads (platform, team_id, channel_id, thread_id, workspace_id, created_at)
			SELECT 'slack', 'T1', 'C1', s || '-' || $2, $3, $1 FROM unnest(ARRAY['pending', 'delivered', 'failed']) s`, []any{at, tag, ws}},
		{`INSERT INTO chat_deliveries (thread_id, message_id, seq, truncated, status, next_attempt_at, created_at)
			SELECT t.id, m.id, 2, false, split_part(t.thread_id, '-', 1), $1, $1
			FROM chat_threads t JOIN messages m ON m.workspace_id = t.workspace_id WHERE t.workspace_id = $2`, []any{at, ws}},
		{`INSERT INTO chat_notices (platform, team_id, channel_id, thread_id, notice_key, kind, text_sealed, status, next_attempt_at, created_at)
			SELECT 'slack', 'T1', 'C1', 'x', s || '-' || $2, 'text', '\x00', s, $1, $1 FROM unnest(ARRAY['pending', 'delivered', 'failed']) s`, []any{at, tag}},
		{`INSERT INTO chat_statuses (chat_thread, turn_id, workspace_id, status, started_at, next_at, refresh_at)
			SELECT t.id, 'turn-' || s || '-' || $2, $3, s, $1, $1, $1
			FROM chat_threads t, unnest(ARRAY['open', 'done', 'failed']) s WHERE t.workspace_id = $3 AND t.thread_id LIKE 'pending-%'`, []any{at, tag, ws}},
		{`INSERT INTO cron_runs (job, tick, started_at) VALUES ('lifecycle', $1, $1)`, []any{at}},
		// An event per delivery status, one orphaned (its endpoint was deleted), and one
		// whose two endpoints are at different stages ("mixed").
		{`INSERT INTO events (id, account_id, workspace_id, turn_id, type, body_sealed, created_at)
			SELECT 'ev-' || s || '-' || $2, $3, $4, 'turn-' || s, 'workspace.turn.completed', '\x00', $1
			FROM unnest(ARRAY['pending', 'delivered', 'failed', 'orphan', 'mixed']) s`, []any{at, tag, h.Account.ID, ws}},
		{`INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, status, max_attempts, next_attempt_at, created_at)
			SELECT 'wd-' || s || '-' || $2, $3, $4, 'ev-' || s || '-' || $2, s, 20, $1::timestamptz, $1::timestamptz FROM unnest(ARRAY['pending', 'delivered', 'failed']) s
			UNION ALL SELECT 'wd-mixed-' || s || '-' || $2, $3, CASE s WHEN 'pending' THEN $4 ELSE $5 END, 'ev-mixed-' || $2, s, 20, $1, $1
			FROM unnest(ARRAY['pending', 'delivered']) s`, []any{at, tag, h.Account.ID, hooks[0], hooks[1]}},
	}
	for _, st := range stmts {
		if _, err := h.PG().DB().Exec(st.sql, st.args...); err != nil {
			t.Fatalf("seed %s rows: %v\n%s", tag, err, st.sql)
		}
	}
}

// column reads one text column of every row, sorted.
func column(t *testing.T, h *hubtest.Hub, query string) []string {
	t.Helper()
	var got []string
	if err := h.PG().DB().Select(&got, query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	slices.Sort(got)
	return got
}

// Rows older than the retention period go, whatever their number (several batches);
// pending rows and younger rows stay, and a kept receipt still replays.
func TestRetentionPrunesOnlyOldSettledRows(t *testing.T) {
	t.Parallel()
	clock := hubtest.NewClock()
	h := hubtest.Start(t, hubtest.WithClock(clock))
	ctx, db := context.Background(), h.PG().DB()
	hook1, _ := hubtest.AddWebhook(t, h, h.Key, "https://hooks.example.com/one")
	hook2, _ := hubtest.AddWebhook(t, h, h.Key, "https://hooks.example.com/two")
	hooks := [2]string{hook1, hook2}

	retentionRows(t, h, clock.Now(), "old", hooks)
	// Over two batches of handled events, to show the sweep repeats until a batch comes back short.
	const bulk = 2500
	if _, err := db.Exec(`INSERT INTO chat_inbox (platform, event_id, thread_key, payload_sealed, status, next_attempt_at, received_at)
		SELECT 'slack', 'bulk-' || g, 'T1/C2/x', '\x00', 'done', $1, $1 FROM generate_series(1, $2) g`, clock.Now(), bulk); err != nil {
		t.Fatal(err)
	}
	clock.Advance(20 * 24 * time.Hour)
	retentionRows(t, h, clock.Now(), "young", hooks)
	clock.Advance(11 * 24 * time.Hour) // old rows are 31 days old, young ones 11

	tick := clock.Now().Truncate(time.Hour)
	p, err := h.Service.Sweeps.SweepRetention(ctx, core.MinRetention, tick)
	want := core.Pruned{Receipts: 1, ChatInbox: 2 + bulk, ChatDeliveries: 2, ChatNotices: 2, ChatStatuses: 2, WebhookDeliveries: 3, Events: 3, CronRuns: 1}
	if err != nil || p != want {
		t.Fatalf("expected %+v pruned, got %+v (%v)", want, p, err)
	}
	kept := map[string][]string{
		`SELECT key FROM idempotency_receipts`: {"young"},
		`SELECT event_id FROM chat_inbox`:      {"done-young", "failed-young", "pending-old", "pending-young"},
		`SELECT t.thread_id FROM chat_deliveries d JOIN chat_threads t ON t.id = d.thread_id`: {
			"delivered-young", "failed-young", "pending-old", "pending-young"},
		`SELECT notice_key FROM chat_notices`: {"delivered-young", "failed-young", "pending-old", "pending-young"},
		`SELECT job FROM cron_runs`:           {"lifecycle", "retention"}, // the young tick, and this sweep's
		`SELECT turn_id FROM chat_statuses`:   {"turn-done-young", "turn-failed-young", "turn-open-old", "turn-open-young"},
		`SELECT id FROM webhook_deliveries`: {"wd-delivered-young", "wd-failed-young", "wd-mixed-delivered-young",
			"wd-mixed-pending-old", "wd-mixed-pending-young", "wd-pending-old", "wd-pending-young"},
		`SELECT id FROM events`: {"ev-delivered-young", "ev-failed-young", "ev-mixed-old", "ev-mixed-young",
			"ev-orphan-young", "ev-pending-old", "ev-pending-young"},
	}
	for query, rows := range kept {
		if got := column(t, h, query); !slices.Equal(got, rows) {
			t.Errorf("%s: expected %v kept, got %v", query, rows, got)
		}
	}

	// A receipt younger than the period still replays the original workspace.
	replay := func() *hubtest.Response {
		return h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "prompt": "hi"},
			"Idempotency-Key", "young")
	}
	first := column(t, h, `SELECT resource_id FROM idempotency_receipts WHERE key = 'young'`)
	if r := replay().Expect(t, 200, ""); r.Body["workspace"].(map[string]any)["workspaceId"] != first[0] {
		t.Fatalf("expected the replay to answer workspace %s, got %s", first[0], r.Raw)
	}

	// The tick is used: the same hour does nothing more, the next one prunes again.
	clock.Advance(24 * time.Hour) // the young rows are 12 days old: still kept
	if _, err := db.Exec(`UPDATE chat_inbox SET received_at = received_at - interval '60 days' WHERE event_id = 'done-young'`); err != nil {
		t.Fatal(err)
	}
	if p, err := h.Service.Sweeps.SweepRetention(ctx, core.MinRetention, tick); err != nil || p.Total() != 0 {
		t.Fatalf("expected a repeated tick to prune nothing, got %+v (%v)", p, err)
	}
	if p, err := h.Service.Sweeps.SweepRetention(ctx, core.MinRetention, tick.Add(time.Hour)); err != nil || p != (core.Pruned{ChatInbox: 1}) {
		t.Fatalf("expected the next hour's tick to prune the aged event only, got %+v (%v)", p, err)
	}
}

// A period under 30 days is refused everywhere it could be set: the environment, a
// Config built in code, and the use case itself (which then deletes nothing).
func TestRetentionBelowThirtyDaysIsRefused(t *testing.T) {
	t.Setenv("WSHUB_RETENTION", "719h")
	if _, err := hub.LoadConfig(); err == nil {
		t.Fatal("expected WSHUB_RETENTION=719h refused")
	}
	t.Setenv("WSHUB_RETENTION", "0")
	if _, err := hub.LoadConfig(); err == nil {
		t.Fatal("expected WSHUB_RETENTION=0 refused")
	}
	t.Setenv("WSHUB_RETENTION", "2160h")
	if c, err := hub.LoadConfig(); err != nil || c.Retention != 90*24*time.Hour {
		t.Fatalf("expected WSHUB_RETENTION=2160h accepted, got %s (%v)", c.Retention, err)
	}

	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.Retention = 0 }))
	if h.Config.Retention != core.MinRetention {
		t.Fatalf("expected an unset retention to default to %s, got %s", core.MinRetention, h.Config.Retention)
	}
	cfg := h.Config
	cfg.Retention = 29 * 24 * time.Hour
	if _, err := hub.New(cfg, h.PG(), nil, hub.Options{}); err == nil {
		t.Fatal("expected hub.New to refuse a 29-day retention")
	}
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}, "Idempotency-Key", "k").Expect(t, 201, "")
	if _, err := h.PG().DB().Exec(`UPDATE idempotency_receipts SET created_at = now() - interval '29 days'`); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.Sweeps.SweepRetention(context.Background(), 24*time.Hour, time.Now()); err == nil {
		t.Fatal("expected SweepRetention to refuse a one-day period")
	}
	if n := len(column(t, h, `SELECT key FROM idempotency_receipts`)); n != 1 {
		t.Fatalf("expected the 29-day-old receipt kept, got %d receipts", n)
	}
}

// A key used again after its receipt was pruned cannot replay (the request it first
// came with is forgotten) and cannot make a new resource (the id derived from the key
// is taken): create, send and upload refuse it as reused, and a new key works.
func TestAKeyOutlivingItsReceiptIsRefusedAsReused(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	create := func(key string) *hubtest.Response {
		return h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}, "Idempotency-Key", key)
	}
	ws := create("k-create").Expect(t, 201, "").Body["workspace"].(map[string]any)["workspaceId"].(string)
	send := func(key string) *hubtest.Response {
		return h.Call("POST", "/v1/api/workspaces/"+ws+"/messages", h.Key, map[string]any{"text": "hi"}, "Idempotency-Key", key)
	}
	upload := func(key string) *hubtest.Response {
		return h.Call("POST", "/v1/api/workspaces/"+ws+"/attachments", h.Key, []byte("notes"),
			"Content-Type", "text/plain", "Idempotency-Key", key)
	}
	send("k-send").Expect(t, 200, "")
	upload("k-upload").Expect(t, 201, "")
	// What the retention sweep does to receipts older than the period.
	if _, err := h.PG().DB().Exec(`DELETE FROM idempotency_receipts`); err != nil {
		t.Fatal(err)
	}
	create("k-create").Expect(t, 409, core.CodeIdempotencyKeyReused)
	send("k-send").Expect(t, 409, core.CodeIdempotencyKeyReused)
	r := upload("k-upload").Expect(t, 409, core.CodeIdempotencyKeyReusedAsset)
	if !strings.Contains(string(r.Raw), "receipt has expired") {
		t.Fatalf("expected the refusal to say the receipt expired, got %s", r.Raw)
	}
	create("k-create-2").Expect(t, 201, "")
	send("k-send-2").Expect(t, 200, "")
	upload("k-upload-2").Expect(t, 201, "")
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM workspaces`); err != nil || n != 2 {
		t.Fatalf("expected exactly two workspaces, got %d (%v)", n, err)
	}
}
