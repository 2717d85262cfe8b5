package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// hostsFixture is a store with one account and project, and a way to add workspaces
// of a provider, in a state, on a host (nil: none), each with an open message when
// ready (so that it has work).
func hostsFixture(t *testing.T) (*postgres.Store, func(q string, args ...any), func(id, provider, state string, host any)) {
	t.Helper()
	store, _ := pgtest.NewStore(t)
	exec := execer(t, store.DB())
	for _, a := range []string{"acct_h", "acct_o"} {
		exec(`INSERT INTO accounts (id, name, entitled, created_at) VALUES ($1, $1, true, now())`, a)
		exec(`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
			VALUES ('prj_' || $1, $1, '/repo', 'repo', 'ready', now(), now())`, a)
	}
	n := 0
	workspace := func(id, provider, state string, host any) {
		t.Helper()
		n++
		acct := "acct_h"
		if provider == "other" { // another account's local workspace
			acct, provider = "acct_o", "local"
		}
		exec(`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
			origin, state, status_code, startup_phase, runtime_state, host, created_at, updated_at)
			VALUES ($1, $2, 'prj_' || $2, $3, 'agent_1', 'm', 'full-access', $1, 'main', 'api', $4, 'x', 'running',
			'online', $5, now(), now() - $6 * interval '1 minute')`, id, acct, provider, state, host, 1000-n)
		if state == "ready" {
			exec(`INSERT INTO messages (id, workspace_id, seq, role, text_sealed, status, turn_id, created_at)
				VALUES ('msg_' || $1, $1, 1, 'user', '\x00', 'pending', 'turn', now())`, id)
		}
	}
	return store, exec, workspace
}

func claimedIDs(ws []*core.Workspace) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	slices.Sort(out)
	return out
}

// A local workspace is claimed only by the hubs of its host; one no host holds yet
// by any hub that runs local workspaces, which records its host in the same
// statement; a remote provider's by any hub, its host left empty. A hub that runs no
// local workspace (host "") claims only remote ones. OtherAccountWaiting counts only
// what the asking host could claim.
func TestTheClaimTakesALocalWorkspaceOnlyOnItsHost(t *testing.T) {
	t.Parallel()
	store, exec, workspace := hostsFixture(t)
	ctx := context.Background()
	for _, state := range []string{"queued", "ready"} {
		workspace("ws_a_"+state, "local", state, "hub-a")
		workspace("ws_b_"+state, "local", state, "hub-b")
		workspace("ws_none_"+state, "local", state, nil)
		workspace("ws_process_"+state, "process", state, nil)
	}
	// release lets every lease go (and, unadopt, the hosts claims recorded).
	release := func(unadopt bool) {
		exec(`UPDATE workspaces SET lease_token = NULL, lease_expires_at = NULL,
			host = CASE WHEN $1 AND id LIKE 'ws_none_%' THEN NULL ELSE host END`, unadopt)
	}
	for _, c := range []struct {
		host string
		want []string
	}{
		{"", []string{"ws_process_queued", "ws_process_ready"}},
		{"hub-b", []string{"ws_b_queued", "ws_b_ready", "ws_none_queued", "ws_none_ready", "ws_process_queued", "ws_process_ready"}},
		{"hub-a", []string{"ws_a_queued", "ws_a_ready", "ws_none_queued", "ws_none_ready", "ws_process_queued", "ws_process_ready"}},
	} {
		release(true)
		got, err := store.ClaimWorkspaces(ctx, "tok_"+c.host, time.Minute, 100, 50, c.host)
		if err != nil {
			t.Fatal(err)
		}
		if g := claimedIDs(got); !slices.Equal(g, c.want) {
			t.Fatalf("host %q: expected to claim %v, got %v", c.host, c.want, g)
		}
		for _, w := range got {
			want := "" // a remote provider's
			if w.ProviderID == "local" {
				want = c.host
			}
			if w.Host != want {
				t.Errorf("host %q: expected %s to be read back on host %q, got %q", c.host, w.ID, want, w.Host)
			}
		}
	}
	// The adoption is on the row: hub-a's claim above recorded hub-a on the workspaces
	// that had no host, and hub-b now passes them by.
	release(false)
	var adopted []string
	if err := store.DB().Select(&adopted, `SELECT id FROM workspaces WHERE id LIKE 'ws_none_%' AND host = 'hub-a' ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if want := []string{"ws_none_queued", "ws_none_ready"}; !slices.Equal(adopted, want) {
		t.Fatalf("expected %v recorded on hub-a, got %v", want, adopted)
	}
	got, err := store.ClaimWorkspaces(ctx, "tok_again", time.Minute, 100, 50, "hub-b")
	if err != nil {
		t.Fatal(err)
	}
	if g, want := claimedIDs(got), []string{"ws_b_queued", "ws_b_ready", "ws_process_queued", "ws_process_ready"}; !slices.Equal(g, want) {
		t.Fatalf("expected hub-b to pass hub-a's adopted workspaces by, claiming %v, got %v", want, g)
	}

	// Another account waits with a turn on hub-a only: hub-a's worker yields to it,
	// hub-b's does not.
	release(false)
	workspace("ws_other_a", "other", "ready", "hub-a")
	for host, want := range map[string]bool{"hub-a": true, "hub-b": false, "": false} {
		waiting, err := store.OtherAccountWaiting(ctx, "acct_h", 50, host)
		if err != nil {
			t.Fatal(err)
		}
		if waiting != want {
			t.Errorf("host %q: expected another account waiting %v, got %v", host, want, waiting)
		}
	}
}
