package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
)

// TestClaimWorkspacesChoosesExactlyTheWorkspacesWithWork pins what a claim takes now
// that it is driven from workspaces_transitional and messages_open: a transitional
// state, or ready with an open user message; never a live lease, a row another
// transaction holds, a paused or settled workspace, or an assistant's message; each
// workspace once, oldest update first, at most limit.
func TestClaimWorkspacesChoosesExactlyTheWorkspacesWithWork(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	db := store.DB()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_c', 'c', true, now())`)
	exec(`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		VALUES ('prj_c', 'acct_c', '/repo', 'repo', 'ready', now(), now())`)
	n := 0
	// workspace adds one, updated n minutes ago (so the claim's order is known), with a
	// lease ("" none, "live", "expired") and messages given as role/status.
	workspace := func(name, state, lease string, msgs ...string) {
		n++
		var expires any
		switch lease {
		case "live":
			expires = time.Now().Add(time.Hour)
		case "expired":
			expires = time.Now().Add(-time.Second)
		}
		exec(`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, lease_token, lease_expires_at, created_at, updated_at)
			VALUES ($1, 'acct_c', 'prj_c', 'local', 'agent_1', 'm', 'full-access', $1, 'main', 'api', $2, 'x', 'running',
			'online', CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE 'other' END, $3, now(), now() - $4 * interval '1 minute')`,
			name, state, expires, 1000-n)
		for i, m := range msgs {
			var role, status string
			fmt.Sscanf(m, "%s %s", &role, &status)
			exec(`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
				VALUES ($1, $2, $3, $4, '\x00', $5, 'turn', now())`, fmt.Sprintf("msg_%s_%d", name, i), name, i+1, role, status)
		}
	}
	var want []string
	for _, s := range []string{"queued", "provisioning", "setup", "resuming", "pausing", "archiving", "deleting"} {
		workspace("ws_"+s, s, "")
		want = append(want, "ws_"+s)
	}
	workspace("ws_setup_with_message", "setup", "", "user pending") // both sources: claimed once
	workspace("ws_ready_pending", "ready", "", "user settled", "user pending")
	workspace("ws_ready_delivered", "ready", "", "user delivered", "user pending")
	workspace("ws_queued_expired_lease", "queued", "expired")
	workspace("ws_ready_expired_lease", "ready", "expired", "user pending")
	// Lifecycle steps before turns, each oldest update first.
	want = append(want, "ws_setup_with_message", "ws_queued_expired_lease", "ws_ready_pending", "ws_ready_delivered", "ws_ready_expired_lease")
	// Not claimable.
	workspace("ws_ready_idle", "ready", "")
	workspace("ws_ready_settled", "ready", "", "user settled", "assistant settled")
	workspace("ws_ready_assistant_pending", "ready", "", "assistant pending")
	workspace("ws_ready_user_failed", "ready", "", "user failed", "user expired")
	for _, s := range []string{"paused", "archived", "deleted", "failed"} {
		workspace("ws_"+s+"_pending", s, "", "user pending")
	}
	workspace("ws_queued_live_lease", "queued", "live")
	workspace("ws_ready_live_lease", "ready", "live", "user pending")
	workspace("ws_setup_row_locked", "setup", "")

	// Another transaction holds one row: SKIP LOCKED passes it by.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM workspaces WHERE id = 'ws_setup_row_locked' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	// Lifecycle steps first, then oldest update first, at most limit.
	first, err := store.ClaimWorkspaces(ctx, "tok1", time.Minute, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range first {
		got = append(got, w.ID)
	}
	if !slices.Equal(got, want[:3]) {
		t.Fatalf("expected the 3 oldest claimable %v, got %v", want[:3], got)
	}
	rest, err := store.ClaimWorkspaces(ctx, "tok2", time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rest {
		got = append(got, w.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("expected exactly the workspaces with work, each once, lifecycle steps first, in update order:\n want %v\n got  %v", want, got)
	}
	// Everything claimed is now under a live lease; the locked row, once free, is next.
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	last, err := store.ClaimWorkspaces(ctx, "tok3", time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 1 || last[0].ID != "ws_setup_row_locked" {
		t.Fatalf("expected only the formerly locked workspace, got %d workspaces", len(last))
	}
}
