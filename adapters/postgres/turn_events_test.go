package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// A workspace's events are numbered 1, 2, 3… in the workspace itself, whatever other
// workspaces write in between, so no tenant can read from its own numbers how busy
// the others are; listing after a number reads that workspace's only.
func TestTurnEventsAreNumberedPerWorkspace(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_e', 'e', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		 VALUES ('prj_e', 'acct_e', '/repo', 'repo', 'ready', now(), now())`,
		`INSERT INTO workspaces (id, account_id, project_id, provider_id, agent, model, runtime_mode, branch, base_ref,
		 origin, state, status_code, startup_phase, runtime_state, created_at, updated_at)
		 SELECT id, 'acct_e', 'prj_e', 'local', 'agent_1', 'm', 'full-access', id, 'main', 'api', 'ready', 'x', 'running',
		 'online', now(), now() FROM unnest(ARRAY['ws_a', 'ws_b']) AS id`,
	} {
		if _, err := store.DB().ExecContext(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	batch := func(ws string, n int) []int64 {
		t.Helper()
		events := make([]*core.StoredTurnEvent, n)
		for i := range events {
			events[i] = &core.StoredTurnEvent{WorkspaceID: ws, TurnID: "turn_1", Type: core.EventToolStarted,
				SealedBody: []byte{byte(i)}, CreatedAt: time.Now()}
		}
		if err := store.InsertTurnEvents(ctx, events); err != nil {
			t.Fatal(err)
		}
		seqs := make([]int64, n)
		for i, e := range events {
			seqs[i] = e.Seq
		}
		return seqs
	}
	expect := func(what string, got []int64, want ...int64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: expected %v, got %v", what, want, got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: expected %v, got %v", what, want, got)
			}
		}
	}
	expect("a's first batch", batch("ws_a", 3), 1, 2, 3)
	expect("b's first batch", batch("ws_b", 2), 1, 2)
	expect("a's second batch", batch("ws_a", 2), 4, 5)
	listed, err := store.ListTurnEvents(ctx, "ws_a", 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for i, e := range listed {
		if e.WorkspaceID != "ws_a" {
			t.Fatalf("expected only ws_a's events, got %+v", e)
		}
		if want := []byte{byte([]int{2, 0, 1}[i])}; string(e.SealedBody) != string(want) {
			t.Fatalf("expected the events in the order written, got body %v at %d", e.SealedBody, e.Seq)
		}
		seqs = append(seqs, e.Seq)
	}
	expect("a after 2", seqs, 3, 4, 5)
	mixed := []*core.StoredTurnEvent{{WorkspaceID: "ws_a", TurnID: "t", Type: core.EventText}, {WorkspaceID: "ws_b", TurnID: "t", Type: core.EventText}}
	if err := store.InsertTurnEvents(ctx, mixed); err == nil {
		t.Fatal("expected a batch of two workspaces' events refused")
	}
}
