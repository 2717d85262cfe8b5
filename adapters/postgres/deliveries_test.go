package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// seedDeliveries makes an account with one endpoint and n deliveries of n events,
// dl_1 the oldest, created a second apart from at.
func seedDeliveries(t *testing.T, store *postgres.Store, at time.Time, n int) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_l', 'l', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
			VALUES ('prj_l', 'acct_l', '/repo', 'repo', 'ready', now(), now())`,
		`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, created_at, updated_at)
			VALUES ('ws_l', 'acct_l', 'prj_l', 'local', 'agent_1', 'm', 'full-access', 'b', 'main', 'api', 'ready', 'ready',
			'running', 'online', now(), now())`,
		`INSERT INTO webhooks (id, account_id, url, description, secret_sealed, created_at)
			VALUES ('wh_l', 'acct_l', 'https://x.example', '', '\x01', now())`,
		`INSERT INTO events (id, account_id, workspace_id, turn_id, type, body_sealed, created_at)
			SELECT 'ev_' || i, 'acct_l', 'ws_l', 'turn_' || i, 'workspace.turn.completed', '\x01', now()
			FROM generate_series(1, 100) i`,
	} {
		if _, err := store.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%.50s: %v", q, err)
		}
	}
	var ds []*core.Delivery
	for i := 1; i <= n; i++ {
		c := at.Add(time.Duration(i) * time.Second)
		ds = append(ds, &core.Delivery{ID: "dl_" + strconv.Itoa(i), AccountID: "acct_l", WebhookID: "wh_l", EventID: "ev_" + strconv.Itoa(i),
			Status: core.DeliveryPending, MaxAttempts: 20, NextAttemptAt: c, CreatedAt: c})
	}
	if err := store.InsertDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
}

// The log's statements: attempts recorded and read back in order, pages newest first
// that follow their cursor, and attempts that go with their delivery.
func TestDeliveryLogStatements(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	at := time.Now().Truncate(time.Millisecond).Add(-time.Hour)
	seedDeliveries(t, store, at, 5)

	for _, a := range []*core.DeliveryAttempt{
		{DeliveryID: "dl_2", Attempt: 2, StartedAt: at, Duration: 1500 * time.Millisecond, Error: "timed out after 10s"},
		{DeliveryID: "dl_2", Attempt: 1, StartedAt: at, Duration: 12 * time.Millisecond, StatusCode: 500, Error: "HTTP 500", ResponseExcerpt: "oops"},
		{DeliveryID: "dl_4", Attempt: 1, StartedAt: at, StatusCode: 204},
	} {
		if err := store.InsertDeliveryAttempt(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.InsertDeliveryAttempt(ctx, &core.DeliveryAttempt{DeliveryID: "dl_2", Attempt: 1, StartedAt: at}); err == nil {
		t.Fatal("expected an attempt number recorded twice refused")
	}
	got, err := store.ListDeliveryAttempts(ctx, []*core.Delivery{{ID: "dl_2", Attempts: 2}, {ID: "dl_4", Attempts: 1}, {ID: "dl_5"}},
		core.LogAttemptsShown)
	if err != nil || len(got) != 3 {
		t.Fatalf("expected 3 attempts, got %d, %v", len(got), err)
	}
	first := *got[0]
	want := core.DeliveryAttempt{DeliveryID: "dl_2", Attempt: 1, StartedAt: at, Duration: 12 * time.Millisecond, StatusCode: 500,
		Error: "HTTP 500", ResponseExcerpt: "oops"}
	if !first.StartedAt.Equal(want.StartedAt) {
		t.Fatalf("started at: expected %s, got %s", want.StartedAt, first.StartedAt)
	}
	first.StartedAt = want.StartedAt
	if first != want || got[1].Attempt != 2 || got[1].StatusCode != 0 || got[1].Duration != 1500*time.Millisecond || got[2].DeliveryID != "dl_4" {
		t.Fatalf("expected dl_2's attempts in order then dl_4's, got %+v, %+v, %+v", first, *got[1], *got[2])
	}

	// Pages of two, newest first, each after the last one's cursor.
	var seen []string
	var before *core.DeliveryCursor
	for range 3 {
		page, err := store.ListWebhookDeliveries(ctx, "wh_l", before, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page {
			seen = append(seen, d.ID)
			if d.EventType != "workspace.turn.completed" || d.WorkspaceID != "ws_l" {
				t.Fatalf("expected the event's type and workspace with %s, got %+v", d.ID, d)
			}
		}
		if len(page) > 0 {
			last := page[len(page)-1]
			before = &core.DeliveryCursor{CreatedAt: last.CreatedAt, ID: last.ID}
		}
	}
	if want := "dl_5 dl_4 dl_3 dl_2 dl_1"; strings.Join(seen, " ") != want {
		t.Fatalf("expected %s, got %s", want, strings.Join(seen, " "))
	}

	// Settled deliveries pruned by retention take their attempts with them.
	if _, err := store.DB().ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'delivered'`); err != nil {
		t.Fatal(err)
	}
	if n, err := store.PruneWebhookDeliveries(ctx, at.Add(3*time.Second), 100); err != nil || n != 2 {
		t.Fatalf("expected dl_1 and dl_2 pruned, got %d, %v", n, err)
	}
	var left int
	if err := store.DB().GetContext(ctx, &left, `SELECT count(*) FROM webhook_delivery_attempts`); err != nil || left != 1 {
		t.Fatalf("expected only dl_4's attempt left, got %d, %v", left, err)
	}
	if _, err := store.DB().ExecContext(ctx, `DELETE FROM webhooks WHERE id = 'wh_l'`); err != nil {
		t.Fatal(err)
	}
	if err := store.DB().GetContext(ctx, &left, `SELECT count(*) FROM webhook_delivery_attempts`); err != nil || left != 0 {
		t.Fatalf("expected the endpoint's deletion to take the rest, got %d, %v", left, err)
	}
}

// A delivery attempted more often than the log shows gives its newest attempts, in
// order, and only those its row counts: attempts settled after the row was read are
// not among them, so the page shows each delivery as of one moment.
func TestDeliveryLogReadsTheNewestAttemptsTheRowCounts(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	at := time.Now().Truncate(time.Millisecond).Add(-time.Hour)
	seedDeliveries(t, store, at, 2)
	if _, err := store.DB().ExecContext(ctx, `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
		SELECT 'dl_1', n, $1::timestamptz + n * interval '1 minute', n, 500 FROM generate_series(1, 30) n`, at); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name             string
		counted, newest  int
		first, last, got int
	}{
		{"the newest of many", 30, 20, 11, 30, 20},
		{"only those the row counts", 28, 20, 9, 28, 20},
		{"all when fewer than the cap", 5, 20, 1, 5, 5},
		{"none when the row counts none", 0, 20, 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.ListDeliveryAttempts(ctx, []*core.Delivery{{ID: "dl_1", Attempts: tt.counted}, {ID: "dl_2"}}, tt.newest)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.got {
				t.Fatalf("expected %d attempts, got %d", tt.got, len(got))
			}
			for i, a := range got {
				if a.DeliveryID != "dl_1" || a.Attempt != tt.first+i || a.Duration != time.Duration(a.Attempt)*time.Millisecond {
					t.Fatalf("expected attempts %d to %d of dl_1 in order, got attempt %d of %s at %d", tt.first, tt.last, a.Attempt, a.DeliveryID, i)
				}
			}
		})
	}
}
