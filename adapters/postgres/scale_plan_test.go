package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgscale"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// scaleTables are the tables that grow with a hub's history: a plan that reads one of
// them whole costs more every month.
var scaleTables = map[string]bool{"workspaces": true, "messages": true, "events": true,
	"webhook_deliveries": true, "webhook_delivery_attempts": true}

// TestHotQueriesPlanNoSeqScanAtScale runs the hub's own store methods (the API's
// reads, the workers' claim, the sweeps and every retention batch) against 20,000
// workspaces in 20 accounts and 200,000 messages, made by pgscale as the bench's scale
// run makes them, and has auto_explain report the plan of every statement they send
// (EXPLAIN's JSON). None may read a growing table with a sequential scan: at this size
// the planner already prefers one where the right index is missing.
func TestHotQueriesPlanNoSeqScanAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 20,000 workspaces")
	}
	t.Parallel()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	spec := pgscale.Spec{AccountID: "acct_plan", ProjectID: "prj_plan", Prefix: "plan", Workspaces: 20000, PerAccount: 1000, Messages: 10}
	start := time.Now()
	for _, stmt := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_plan', 'plan', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		 VALUES ('prj_plan', 'acct_plan', '/repo', 'repo', 'ready', now(), now())`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := pgscale.Generate(ctx, db, spec); err != nil {
		t.Fatal(err)
	}
	// Some work waiting, as on a live hub: workspaces being created, messages queued.
	ready := spec.Ready(40)
	for _, st := range []struct {
		sql  string
		args []any
	}{
		{`UPDATE workspaces SET state = 'queued' WHERE id = ANY($1)`, []any{pq.Array(ready[:4])}},
		{`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
		  SELECT 'msg_open_' || w, w, 11, 'user', '\x00', 'pending', 'turn_open_' || w, now() FROM unnest($1::text[]) w`,
			[]any{pq.Array(ready[4:])}},
		{`UPDATE workspaces SET latest_seq = 11 WHERE id = ANY($1)`, []any{pq.Array(ready[4:])}},
		{`ANALYZE`, nil},
	} {
		if _, err := db.ExecContext(ctx, st.sql, st.args...); err != nil {
			t.Fatalf("%.60s: %v", st.sql, err)
		}
	}
	t.Logf("generated %d workspaces and %d messages in %s", spec.Workspaces, spec.Workspaces*spec.Messages, time.Since(start).Round(time.Millisecond))

	var mu sync.Mutex
	var plans []string
	explained := dbURL + "&session_preload_libraries=auto_explain&auto_explain.log_min_duration=0" +
		"&auto_explain.log_format=json&auto_explain.log_level=notice"
	if !strings.Contains(dbURL, "?") {
		explained = strings.Replace(explained, "&", "?", 1)
	}
	store, err := postgres.OpenWithNotices(ctx, explained, func(n *pq.Error) {
		if _, plan, ok := strings.Cut(n.Message, "plan:"); ok {
			mu.Lock()
			plans = append(plans, plan)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	now := time.Now()
	before := now.Add(-core.MinRetention)
	ws := ready[0]
	calls := []struct {
		name string
		call func() error
	}{
		{"GetWorkspace", func() error { _, err := store.GetWorkspace(ctx, "acct_plan", ws); return err }},
		{"ListWorkspaces", func() error { _, err := store.ListWorkspaces(ctx, "acct_plan"); return err }},
		{"ListWorkspacePage", func() error {
			_, err := store.ListWorkspacePage(ctx, core.WorkspacePageQuery{AccountID: "acct_plan", Limit: 50})
			return err
		}},
		{"ListWorkspacePageBefore", func() error {
			_, err := store.ListWorkspacePage(ctx, core.WorkspacePageQuery{AccountID: "acct_plan", Limit: 50,
				BeforeAt: now.Add(-2 * 24 * time.Hour), BeforeID: spec.WorkspaceID(spec.Workspaces - 600)})
			return err
		}},
		{"ListMessages", func() error { _, err := store.ListMessages(ctx, ws, 4, 200); return err }},
		{"ClaimWorkspaces", func() error {
			_, err := store.ClaimWorkspaces(ctx, "lease_plan", 30*time.Second, 16, 50, "host_plan")
			return err
		}},
		{"OtherAccountWaiting", func() error { _, err := store.OtherAccountWaiting(ctx, "acct_other", 50, "host_plan"); return err }},
		{"IdleReadyWorkspaces", func() error { _, err := store.IdleReadyWorkspaces(ctx, now.Add(-time.Hour), 500); return err }},
		{"WorkspacesInStateSince", func() error {
			_, err := store.WorkspacesInStateSince(ctx, core.StatePaused, now.Add(-7*24*time.Hour), 500)
			return err
		}},
		{"ExpirePendingMessages", func() error { _, err := store.ExpirePendingMessages(ctx, now.Add(-core.MessageExpiry)); return err }},
		{"FailStrandedMessages", func() error { _, err := store.FailStrandedMessages(ctx); return err }},
		{"RevokeSilentRuntimes", func() error {
			_, err := store.RevokeSilentRuntimes(ctx, now.Add(-time.Minute), now.Add(-time.Minute), 500)
			return err
		}},
		// As the retention sweep does: the deliveries to the end, then the events they
		// leave.
		{"PruneWebhookDeliveries", func() error {
			for {
				n, err := store.PruneWebhookDeliveries(ctx, before, 1000)
				if err != nil || n < 1000 {
					return err
				}
			}
		}},
		{"PruneEvents", func() error { _, err := store.PruneEvents(ctx, before, 1000); return err }},
		{"PruneReceipts", func() error { _, err := store.PruneReceipts(ctx, before, 1000); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			plans = nil
			mu.Unlock()
			if err := c.call(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			got := plans
			mu.Unlock()
			if len(got) == 0 {
				t.Fatal("expected auto_explain to report the plan of each statement, got none")
			}
			for _, p := range got {
				var plan struct {
					Query string          `json:"Query Text"`
					Plan  json.RawMessage `json:"Plan"`
				}
				if err := json.Unmarshal([]byte(p), &plan); err != nil {
					t.Fatalf("expected a JSON plan, got %v: %s", err, p)
				}
				scans, err := seqScans(plan.Plan)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%.80s: %s", strings.Join(strings.Fields(plan.Query), " "), planSummary(plan.Plan))
				for _, table := range scans {
					if scaleTables[table] {
						t.Errorf("expected no sequential scan of %s, got one in:\n%s\n%s", table, plan.Query, plan.Plan)
					}
				}
			}
		})
	}
}

// planNode is what seqScans reads of an EXPLAIN (FORMAT JSON) node.
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

// seqScans lists the tables plan reads with a sequential scan, its subplans included.
func seqScans(plan json.RawMessage) ([]string, error) {
	var root planNode
	if err := json.Unmarshal(plan, &root); err != nil {
		return nil, err
	}
	var out []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.NodeType == "Seq Scan" {
			out = append(out, n.Relation)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root)
	return out, nil
}

// planSummary is the plan's scans in one line, for the log: "Index Scan workspaces_pkey, ...".
func planSummary(plan json.RawMessage) string {
	var root planNode
	if json.Unmarshal(plan, &root) != nil {
		return "?"
	}
	var parts []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if strings.Contains(n.NodeType, "Scan") {
			parts = append(parts, fmt.Sprintf("%s %s", n.NodeType, n.Index+n.Relation))
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root)
	return strings.Join(parts, ", ")
}
