package pgscale_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/wshub/wshub/adapters/postgres/pgscale"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
)

// TestGeneratedRowsReadAsTheHubsOwn generates a small history across three accounts,
// its texts sealed, and reads it back through the store as the hub does: each
// workspace's messages open under their bindings, in seq order up to its latest_seq,
// and the caller's account lists only its own live workspaces.
func TestGeneratedRowsReadAsTheHubsOwn(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	db := store.DB().DB
	for _, stmt := range []string{
		`INSERT INTO accounts (id, name, entitled, created_at) VALUES ('acct_gen', 'gen', true, now())`,
		`INSERT INTO projects (id, account_id, repository, display_name, state, created_at, updated_at)
		 VALUES ('prj_gen', 'acct_gen', '/repo', 'repo', 'ready', now(), now())`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	spec := pgscale.Spec{AccountID: "acct_gen", ProjectID: "prj_gen", Prefix: "gen", Workspaces: 25, PerAccount: 10,
		Messages: 6, Seal: sealer.Seal}
	if err := pgscale.Generate(ctx, db, spec); err != nil {
		t.Fatal(err)
	}
	for g := 1; g <= spec.Workspaces; g++ {
		id := spec.WorkspaceID(g)
		msgs, err := store.ListMessages(ctx, id, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != spec.Messages {
			t.Fatalf("expected %d messages in %s, got %d", spec.Messages, id, len(msgs))
		}
		for i, m := range msgs {
			text, err := sealer.Open(m.SealedText, "message:"+id+":"+m.ID)
			if err != nil || len(text) == 0 {
				t.Fatalf("expected %s's message %s to open under its binding, got %q, %v", id, m.ID, text, err)
			}
			if m.Seq != int64(i+1) {
				t.Errorf("expected seq %d, got %d", i+1, m.Seq)
			}
		}
	}
	mine, err := store.ListWorkspaces(ctx, "acct_gen")
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, id := range spec.Ready(5) {
		ready[id] = true
	}
	for _, w := range mine {
		if w.AccountID != "acct_gen" || w.State == core.StateDeleted || w.LatestSeq != int64(spec.Messages) {
			t.Errorf("expected the account's live workspaces at seq %d, got %s of %s, %s at %d", spec.Messages, w.ID, w.AccountID, w.State, w.LatestSeq)
		}
		delete(ready, w.ID)
	}
	if len(mine) != 8 || len(ready) != 0 {
		t.Errorf("expected the newest 10 workspaces but the two deleted by hand listed, the 5 of Ready among them; got %d, missing %v", len(mine), ready)
	}
}
