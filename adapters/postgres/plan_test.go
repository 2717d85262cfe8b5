package postgres_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
)

// TestHotQueriesUseTheirIndexes plans the statements that run on every create and on
// every worker poll against 100,000 workspaces (most idle and ready, a fifth deleted,
// a few with work, spread over three hosts, a few more on a lost one), and the delivery log's pages against 110,000 deliveries of two
// endpoints (one delivery with a thousand attempts), and checks that PostgreSQL reads
// them through their indexes: no sequential scan, whatever the tables' size.
func TestHotQueriesUseTheirIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 100,000 workspaces")
	}
	t.Parallel()
	db, err := sql.Open("postgres", pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, stmt := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_plan', 'plan', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		 VALUES ('prj_plan', 'acct_plan', '/repo', 'repo', 'ready', now(), now())`,
		// Every 5th deleted, every 1000th in a transitional state, the rest ready.
		`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
		   origin, state, status_code, startup_phase, runtime_state, created_at, updated_at)
		 SELECT 'ws_' || i, 'acct_plan', 'prj_plan', 'local', 'agent_1', 'm', 'full-access', 'b' || i, 'main', 'api',
		   CASE WHEN i % 1000 = 0 THEN 'setup' WHEN i % 5 = 0 THEN 'deleted' ELSE 'ready' END, 'x', 'running', 'online',
		   now() - i * interval '1 second', now() - i * interval '1 second'
		 FROM generate_series(1, 100000) i`,
		// Three hosts seen now, holding the workspaces, and one not seen for an hour,
		// which held every 5,000th.
		`INSERT INTO hosts (id, started_at, seen_at) VALUES ('host_0', now(), now()), ('host_1', now(), now()),
		   ('host_2', now(), now()), ('host_lost', now(), now() - interval '1 hour')`,
		`UPDATE workspaces SET host = CASE WHEN substr(id, 4)::int % 5000 = 7 THEN 'host_lost'
		   ELSE 'host_' || (substr(id, 4)::int % 3) END`,
		// Every message settled but one open message on every 2,000th workspace.
		`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
		 SELECT 'msg_' || i, 'ws_' || i, 1, 'user', '\x00', CASE WHEN i % 2000 = 1 THEN 'pending' ELSE 'settled' END,
		   'turn_' || i, now()
		 FROM generate_series(1, 100000) i`,
		// Two endpoints: every turn delivered to the first, every 10th to the second as
		// well, each delivery with two attempts recorded.
		`INSERT INTO webhooks (id, account_id, url, description, secret_sealed, created_at)
		 VALUES ('wh_a', 'acct_plan', 'https://a.example', '', '\x01', now()),
		        ('wh_b', 'acct_plan', 'https://b.example', '', '\x01', now())`,
		`INSERT INTO events (id, account_id, workspace_id, turn_id, type, body_sealed, created_at)
		 SELECT 'ev_' || i, 'acct_plan', 'ws_' || i, 'turn_' || i, 'workspace.turn.completed', '\x01',
		   now() - i * interval '1 second'
		 FROM generate_series(1, 100000) i`,
		`INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, status, attempts, max_attempts,
		   next_attempt_at, created_at)
		 SELECT 'dlv_' || w || i, 'acct_plan', 'wh_' || w, 'ev_' || i, 'delivered', 2, 20, now(), now() - i * interval '1 second'
		 FROM generate_series(1, 100000) i, (VALUES ('a'), ('b')) v(w) WHERE w = 'a' OR i % 10 = 0`,
		`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
		 SELECT id, n, created_at, 10, 200 FROM webhook_deliveries, generate_series(1, 2) n`,
		// One delivery redelivered again and again: a thousand attempts.
		`INSERT INTO webhook_delivery_attempts (delivery_id, attempt, started_at, duration_ms, status_code)
		 SELECT 'dlv_a1', n, now(), 10, 500 FROM generate_series(3, 1000) n`,
		`UPDATE webhook_deliveries SET attempts = 1000, max_attempts = 1000 WHERE id = 'dlv_a1'`,
		// Two thousand more projects with two secrets each, and a chat thread on every
		// 10th workspace: a turn's start reads its own by their keys.
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		 SELECT 'prj_' || i, 'acct_plan', '/repo', 'repo', 'ready', now(), now() FROM generate_series(1, 2000) i`,
		`INSERT INTO project_secrets (project_id, name, value_sealed, agent, created_at, updated_at)
		 SELECT 'prj_' || i, n, '\x01', true, now(), now() FROM generate_series(1, 2000) i, (VALUES ('A'), ('B')) v(n)`,
		`INSERT INTO chat_threads (platform, team_id, channel_id, thread_id, workspace_id, created_at)
		 SELECT 'slack', 'T', 'C', i::text, 'ws_' || i, now() FROM generate_series(10, 100000, 10) i`,
		`ANALYZE`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	plans := []struct {
		name  string
		query string
		args  []any
		index []string
	}{
		{"NewestWorkspace", postgres.NewestWorkspaceSQL, []any{"acct_plan"}, []string{"workspaces_account_newest"}},
		{"ClaimWorkspaces", postgres.ClaimWorkspacesSQL, []any{"lease_plan", 30, 16, 50, "host_plan"},
			[]string{"workspaces_transitional", "messages_open", "workspaces_leased"}},
		// A turn's start: the leased workspace by an index (its key, or the leased rows),
		// its oldest open message.
		{"TakeNextTurn", postgres.TakeNextTurnSQL, []any{"ws_2001", "lease_plan", time.Now()},
			[]string{"messages_open", "messages_pkey", "chat_threads_workspace", "projects_pkey", "project_secrets_pkey"}},
		{"OtherAccountWaiting", postgres.OtherAccountWaitingSQL, []any{"acct_other", 50, "host_plan"},
			[]string{"workspaces_transitional", "messages_open", "workspaces_leased"}},
		// The lost-host sweep, while a host is lost: from the host to its few workspaces
		// in the states the sweep acts on.
		{"LockLostHostWorkspace", postgres.LockLostHostWorkspaceSQL, []any{"host_lost", 600}, []string{"workspaces_host"}},
		{"ReleaseLostHostWorkspaces", postgres.ReleaseLostHostSQL, []any{"host_lost", 600, 500}, []string{"workspaces_host"}},
		{"ListWebhookDeliveries", postgres.ListWebhookDeliveriesSQL, []any{"wh_b", nil, "", 50},
			[]string{"webhook_deliveries_webhook", "events_pkey"}},
		{"ListWebhookDeliveriesBefore", postgres.ListWebhookDeliveriesSQL, []any{"wh_b", time.Now().Add(-time.Hour), "dlv_b3600", 50},
			[]string{"webhook_deliveries_webhook", "events_pkey"}},
		// Each delivery's newest attempts: a backward range of the primary key that stops
		// at the cap, however many attempts the delivery has.
		{"ListDeliveryAttempts", postgres.ListDeliveryAttemptsSQL, []any{pq.Array([]string{"dlv_a1", "dlv_b10", "dlv_a5000"}),
			pq.Array([]int64{1000, 2, 2}), 20},
			[]string{"Limit", "Index Scan Backward using webhook_delivery_attempts_pkey"}},
	}
	check := func(t *testing.T, name, query string, args []any, index []string) {
		rows, err := db.QueryContext(ctx, "EXPLAIN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l)
		}
		plan := strings.Join(lines, "\n")
		t.Logf("%s at scale:\n%s", name, plan)
		for _, table := range []string{"workspaces", "messages", "projects", "project_secrets", "chat_threads", "webhook_deliveries",
			"webhook_delivery_attempts", "events"} {
			if strings.Contains(plan, "Seq Scan on "+table+" ") {
				t.Errorf("expected no sequential scan of %s, got:\n%s", table, plan)
			}
		}
		for _, ix := range index {
			if !strings.Contains(plan, ix) {
				t.Errorf("expected the plan to use %s, got:\n%s", ix, plan)
			}
		}
	}
	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) { check(t, p.name, p.query, p.args, p.index) })
	}
	// Statistics taken while every 4th workspace had a message queued, then the queue
	// emptied before the next ANALYZE: the planner expects 25,000 candidates, and
	// the claim must still read workspaces by key, not whole, on every claim.
	t.Run("ClaimWorkspacesAfterAQueueEmptied", func(t *testing.T) {
		for _, stmt := range []string{
			`UPDATE messages SET status = 'pending' WHERE substr(id, 5)::int % 4 = 1`,
			`ANALYZE messages`,
			`UPDATE messages SET status = 'expired' WHERE substr(id, 5)::int % 4 = 1`,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%.60s: %v", stmt, err)
			}
		}
		check(t, "ClaimWorkspaces after a queue emptied", postgres.ClaimWorkspacesSQL, []any{"lease_plan", 30, 16, 50, "host_plan"},
			[]string{"workspaces_transitional", "messages_open", "workspaces_leased"})
	})
}
