package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// execer runs statements on db, failing t on an error.
func execer(t *testing.T, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) func(q string, args ...any) {
	return func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
}

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
	exec := execer(t, db)
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
	first, err := store.ClaimWorkspaces(ctx, "tok1", time.Minute, 3, 50, "host_a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range first {
		got = append(got, w.ID)
		// Handed over as the claim left the row: the worker reads it no more.
		if w.LeaseToken != "tok1/"+w.ID || w.Host != "host_a" {
			t.Fatalf("expected %s claimed with lease tok1/%s on host_a, got %q on %q", w.ID, w.ID, w.LeaseToken, w.Host)
		}
	}
	if !slices.Equal(got, want[:3]) {
		t.Fatalf("expected the 3 oldest claimable %v, got %v", want[:3], got)
	}
	rest, err := store.ClaimWorkspaces(ctx, "tok2", time.Minute, 100, 50, "host_a")
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
	last, err := store.ClaimWorkspaces(ctx, "tok3", time.Minute, 100, 50, "host_a")
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 1 || last[0].ID != "ws_setup_row_locked" {
		t.Fatalf("expected only the formerly locked workspace, got %d workspaces", len(last))
	}
}

// TestClaimIsFairBetweenAccounts pins the fair order: a slot goes to the account
// holding the fewest workspaces, whatever another queued before it; one claim of
// several slots takes one of each account before a second of any; an account at its
// quota of running turns has none claimed (its lifecycle steps still are), and
// OtherAccountWaiting asks the same question.
func TestClaimIsFairBetweenAccounts(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	db := store.DB()
	ctx := context.Background()
	exec := execer(t, db)
	n := 0
	// workspace adds one of acct, updated n minutes ago, with an open message when
	// ready; leased: a worker holds it.
	workspace := func(acct, name, state string, leased bool) {
		n++
		var expires any
		if leased {
			expires = time.Now().Add(time.Hour)
		}
		exec(`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, lease_token, lease_expires_at, created_at, updated_at)
			VALUES ($1, $2, 'prj_' || $2, 'local', 'agent_1', 'm', 'full-access', $1, 'main', 'api', $3, 'x', 'running',
			'online', CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE 'other' END, $4, now(), now() - $5 * interval '1 minute')`,
			name, acct, state, expires, 1000-n)
		if state == "ready" {
			exec(`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
				VALUES ('msg_' || $1, $1, 1, 'user', '\x00', 'pending', 'turn', now())`, name)
		}
	}
	for _, a := range []string{"a", "b", "c"} {
		exec(`INSERT INTO accounts (id, name, entitled, created_at) VALUES ($1, $1, true, now())`, a)
		exec(`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
			VALUES ('prj_' || $1, $1, '/repo', 'repo', 'ready', now(), now())`, a)
	}
	// a queued first, and most: three turns waiting, one running.
	workspace("a", "a_running", "ready", true)
	workspace("a", "a1", "ready", false)
	workspace("a", "a2", "ready", false)
	workspace("a", "a3", "ready", false)
	workspace("b", "b1", "ready", false)
	workspace("b", "b2", "ready", false)
	ids := func(ws []*core.Workspace) []string {
		var out []string
		for _, w := range ws {
			out = append(out, w.ID)
		}
		slices.Sort(out)
		return out
	}
	waiting := func(acct string, quota int) bool {
		t.Helper()
		ok, err := store.OtherAccountWaiting(ctx, acct, quota, "host_a")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !waiting("a", 50) || !waiting("b", 50) {
		t.Fatal("expected each of a and b to see the other waiting")
	}
	// One slot: b holds none, a holds one: b's oldest.
	got, err := store.ClaimWorkspaces(ctx, "t1", time.Minute, 1, 50, "host_a")
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, []string{"b1"}) {
		t.Fatalf("expected the slot to go to b, which holds nothing, got %v", g)
	}
	// Two slots: a and b hold one each: one of each, oldest first.
	if got, err = store.ClaimWorkspaces(ctx, "t2", time.Minute, 2, 50, "host_a"); err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, []string{"a1", "b2"}) {
		t.Fatalf("expected one workspace of each account, got %v", g)
	}
	// a is at a quota of 2 running turns: nothing of a is claimed; c's create is.
	exec(`UPDATE accounts SET max_running_turns = 2 WHERE id = 'a'`)
	workspace("c", "c_queued", "queued", false)
	if !waiting("a", 50) || waiting("c", 50) {
		t.Fatal("expected a to see c's create waiting, and c to see a's turns held by their quota")
	}
	if got, err = store.ClaimWorkspaces(ctx, "t3", time.Minute, 10, 50, "host_a"); err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, []string{"c_queued"}) {
		t.Fatalf("expected only c's create while a is at its quota, got %v", g)
	}
	// The hub's default quota applies to an account without its own.
	exec(`UPDATE accounts SET max_running_turns = NULL WHERE id = 'a'`)
	if got, err = store.ClaimWorkspaces(ctx, "t4", time.Minute, 10, 2, "host_a"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("expected nothing claimed under the hub's default quota of 2, got %v", ids(got))
	}
	if got, err = store.ClaimWorkspaces(ctx, "t5", time.Minute, 10, 3, "host_a"); err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, []string{"a2"}) {
		t.Fatalf("expected a's oldest waiting turn under a quota of 3, got %v", g)
	}
}
