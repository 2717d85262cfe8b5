package main

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// A development key revoked in the app is replaced, at the next make run, by a new key
// of the same account, said in words; the account, its project and workspaces stay.
func TestARevokedDevelopmentKeyIsReplacedInTheSameAccount(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := t.Context()
	keys, err := h.Service.Admin.ListAPIKeys(ctx, h.Account.ID)
	if err != nil || len(keys) != 1 {
		t.Fatalf("expected the test hub's one key, got %v %v", keys, err)
	}
	if err := h.Service.Admin.RevokeAPIKey(ctx, keys[0].ID); err != nil {
		t.Fatal(err)
	}
	st := devState{AccountID: h.Account.ID, ProjectID: h.Project.ID, Key: h.Key}
	created, note, err := ensureDevAccount(ctx, h.Hub, h.Config, &st)
	if err != nil || created || !strings.Contains(note, "revoked") {
		t.Fatalf("expected the account kept and a note, got created %v, note %q, err %v", created, note, err)
	}
	if st.AccountID != h.Account.ID || st.ProjectID != h.Project.ID || st.Key == h.Key {
		t.Fatalf("expected the same account and project with a new key, got %+v", st)
	}
	acct, err := h.Service.Workspaces.Authenticate(ctx, "Bearer "+st.Key)
	if err != nil || acct.ID != h.Account.ID {
		t.Fatalf("expected the new key to act on the same account, got %v %v", acct, err)
	}
	list, err := h.Service.Admin.ListAccounts(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("expected no second account, got %d (%v)", len(list), err)
	}
}
