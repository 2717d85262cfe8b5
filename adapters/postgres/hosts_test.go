package postgres_test

import (
	"context"
	"errors"
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

// HostSeen records a host by the database's clock: a start sets started_at, a later
// beat only seen_at.
func TestHostSeenRecordsTheStartOnceAndEveryBeat(t *testing.T) {
	t.Parallel()
	store, _, _ := hostsFixture(t)
	ctx := context.Background()
	type row struct {
		Started time.Time `db:"started_at"`
		Seen    time.Time `db:"seen_at"`
	}
	read := func() row {
		t.Helper()
		var r row
		if err := store.DB().Get(&r, `SELECT started_at, seen_at FROM hosts WHERE id = 'hub-a'`); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if err := store.HostSeen(ctx, "hub-a", true); err != nil {
		t.Fatal(err)
	}
	first := read()
	if !first.Started.Equal(first.Seen) {
		t.Fatalf("expected a start seen at its start, got %+v", first)
	}
	if err := store.HostSeen(ctx, "hub-a", false); err != nil {
		t.Fatal(err)
	}
	beat := read()
	if !beat.Started.Equal(first.Started) || !beat.Seen.After(first.Seen) {
		t.Fatalf("expected a beat to move seen_at only, from %+v got %+v", first, beat)
	}
	if err := store.HostSeen(ctx, "hub-a", true); err != nil {
		t.Fatal(err)
	}
	if again := read(); !again.Started.After(first.Started) {
		t.Fatalf("expected a restart to move started_at, from %+v got %+v", first, again)
	}
}

// The lost-host sweep's statements: LostHosts names the hosts not seen for lostAfter;
// LockLostHostWorkspace takes, one at a time, such a host's workspaces being set up,
// ready or resuming, passing by a row another transaction holds, and none once the
// host is seen again; ReleaseLostHostWorkspaces lets go of those queued, or being
// paused, archived or deleted.
// Nothing of a live host, of a workspace with no host, or in another state is touched.
func TestLostHostStatementsTakeOnlyTheWorkspacesOfHostsNotSeen(t *testing.T) {
	t.Parallel()
	store, exec, workspace := hostsFixture(t)
	ctx := context.Background()
	exec(`INSERT INTO hosts (id, started_at, seen_at) VALUES ('hub-live', now(), now()),
		('hub-lost', now() - interval '2 hours', now() - interval '1 hour')`)
	states := []string{"queued", "provisioning", "setup", "ready", "pausing", "paused", "resuming",
		"archiving", "archived", "deleting", "deleted", "failed"}
	for _, s := range states {
		workspace("lost_"+s, "local", s, "hub-lost")
		workspace("live_"+s, "local", s, "hub-live")
		workspace("none_"+s, "local", s, nil)
	}
	exec(`UPDATE workspaces SET lease_token = 'tok', lease_expires_at = now() + interval '1 hour'`)
	workspace("lost_ready_held", "local", "ready", "hub-lost")

	// Another transaction holds one of them: it is passed by, for now.
	tx, err := store.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM workspaces WHERE id = 'lost_ready_held' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	lost := func(lostAfter time.Duration) []string {
		t.Helper()
		hosts, err := store.LostHosts(ctx, lostAfter)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hosts {
			ids = append(ids, h.ID)
		}
		return ids
	}
	if got := lost(2 * time.Hour); len(got) != 0 {
		t.Fatalf("expected no host lost for 2 hours, got %v", got)
	}
	if got := lost(10 * time.Minute); !slices.Equal(got, []string{"hub-lost"}) {
		t.Fatalf("expected hub-lost lost for 10 minutes, got %v", got)
	}

	// lockAll locks and fails host's workspaces one by one, as the sweep does.
	lockAll := func(host string, lostAfter time.Duration) []string {
		t.Helper()
		var ids []string
		for range 20 {
			var ws *core.Workspace
			err := store.InTx(ctx, func(q core.Queries) error {
				w, host, err := q.LockLostHostWorkspace(ctx, host, lostAfter)
				if err != nil {
					return err
				}
				if host.ID != "hub-lost" || time.Since(host.SeenAt) < time.Hour {
					t.Errorf("expected hub-lost, seen an hour ago, got %+v", host)
				}
				ws = w
				_, err = q.SetWorkspaceState(ctx, w.ID, w.State, core.StateChange{State: core.StateFailed, At: time.Now()})
				return err
			})
			if errors.Is(err, core.ErrNoRows) {
				slices.Sort(ids)
				return ids
			}
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, ws.ID)
		}
		t.Fatalf("expected the lost workspaces to run out, got %v", ids)
		return nil
	}
	if got := lockAll("hub-lost", 2*time.Hour); len(got) != 0 {
		t.Fatalf("expected nothing of a host seen within lostAfter, got %v", got)
	}
	if got := lockAll("hub-live", 10*time.Minute); len(got) != 0 {
		t.Fatalf("expected nothing of a live host, got %v", got)
	}
	want := []string{"lost_provisioning", "lost_ready", "lost_resuming", "lost_setup"}
	if got := lockAll("hub-lost", 10*time.Minute); !slices.Equal(got, want) {
		t.Fatalf("expected the failable workspaces of the lost host %v, got %v", want, got)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	// A beat of the lost host, and its last workspace is no longer taken.
	if err := store.HostSeen(ctx, "hub-lost", false); err != nil {
		t.Fatal(err)
	}
	if got := lockAll("hub-lost", 10*time.Minute); len(got) != 0 {
		t.Fatalf("expected nothing of a host seen again, got %v", got)
	}
	exec(`UPDATE hosts SET seen_at = now() - interval '1 hour' WHERE id = 'hub-lost'`)
	if got := lockAll("hub-lost", 10*time.Minute); !slices.Equal(got, []string{"lost_ready_held"}) {
		t.Fatalf("expected the formerly held workspace next, got %v", got)
	}

	if none, err := store.ReleaseLostHostWorkspaces(ctx, "hub-live", 10*time.Minute, 100); err != nil || len(none) != 0 {
		t.Fatalf("expected nothing of a live host let go, got %v (%v)", none, err)
	}
	released, err := store.ReleaseLostHostWorkspaces(ctx, "hub-lost", 10*time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(released)
	if want := []string{"lost_archiving", "lost_deleting", "lost_pausing", "lost_queued"}; !slices.Equal(released, want) {
		t.Fatalf("expected %v let go, got %v", want, released)
	}
	var left []string
	if err := store.DB().Select(&left, `SELECT id FROM workspaces
		WHERE host IS NULL AND id LIKE 'lost_%' AND lease_token IS NULL ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, []string{"lost_archiving", "lost_deleting", "lost_pausing", "lost_queued"}) {
		t.Fatalf("expected only the released workspaces without host and lease, got %v", left)
	}
	if again, err := store.ReleaseLostHostWorkspaces(ctx, "hub-lost", 10*time.Minute, 100); err != nil || len(again) != 0 {
		t.Fatalf("expected nothing more to let go, got %v (%v)", again, err)
	}
}

// RevokeLease fences the holder out: its renewal finds the lease gone.
func TestRevokeLeaseFencesTheHolderOut(t *testing.T) {
	t.Parallel()
	store, _, workspace := hostsFixture(t)
	ctx := context.Background()
	workspace("ws_q", "local", "queued", "hub-a")
	got, err := store.ClaimWorkspaces(ctx, "tok", time.Minute, 1, 50, "hub-a")
	if err != nil || len(got) != 1 {
		t.Fatalf("expected the workspace claimed, got %d (%v)", len(got), err)
	}
	if err := store.RevokeLease(ctx, "ws_q"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.RenewLease(ctx, "ws_q", got[0].LeaseToken, time.Minute); err != nil || ok {
		t.Fatalf("expected the renewal refused, got ok %v (%v)", ok, err)
	}
}
