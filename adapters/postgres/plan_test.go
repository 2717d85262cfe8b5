package postgres_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
)

// TestHotQueriesUseTheirIndexes plans the statements that run on every create and on
// every worker poll against 100,000 workspaces (most idle and ready, a fifth deleted,
// a few with work) and checks that PostgreSQL reads them through their indexes: no
// sequential scan of workspaces, whatever the table's size.
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
		// Every message settled but one open message on every 2,000th workspace.
		`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
		 SELECT 'msg_' || i, 'ws_' || i, 1, 'user', '\x00', CASE WHEN i % 2000 = 1 THEN 'pending' ELSE 'settled' END,
		   'turn_' || i, now()
		 FROM generate_series(1, 100000) i`,
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
		{"ClaimWorkspaces", postgres.ClaimWorkspacesSQL, []any{"lease_plan", 30, 16, 50},
			[]string{"workspaces_transitional", "messages_open", "workspaces_leased"}},
		{"OtherAccountWaiting", postgres.OtherAccountWaitingSQL, []any{"acct_other", 50},
			[]string{"workspaces_transitional", "messages_open", "workspaces_leased"}},
	}
	for _, p := range plans {
		t.Run(p.name, func(t *testing.T) {
			rows, err := db.QueryContext(ctx, "EXPLAIN "+p.query, p.args...)
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
			t.Logf("%s on 100,000 workspaces:\n%s", p.name, plan)
			if strings.Contains(plan, "Seq Scan on workspaces") {
				t.Errorf("expected no sequential scan of workspaces, got:\n%s", plan)
			}
			for _, ix := range p.index {
				if !strings.Contains(plan, ix) {
					t.Errorf("expected the plan to use %s, got:\n%s", ix, plan)
				}
			}
		})
	}
}
