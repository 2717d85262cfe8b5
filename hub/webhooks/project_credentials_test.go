package webhooks_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// Two accounts' projects, each with its own token for its own private repository on a
// hub that also has a hub-wide token: each workspace's branch is pushed with its
// project's token only; each repository never sees the other's token nor the hub's;
// and the tokens are sealed at rest and never shown.
func TestEachAccountsProjectUsesItsOwnToken(t *testing.T) {
	t.Parallel()
	const hubToken = "tok_hubwide_0000"
	h := hubtest.StartDelivering(t, hubtest.WithConfig(func(c *hub.Config) { c.GitHTTPSToken = hubToken }))
	ctx := context.Background()
	acctB, keyB := h.NewAccount(true)
	type side struct {
		account, key, token string
		url                 string
		seen                func() []string
		project             *core.Project
	}
	sides := []*side{{account: h.Account.ID, key: h.Key, token: "tok_accountA_1111"}, {account: acctB.ID, key: keyB, token: "tok_accountB_2222"}}
	for _, s := range sides {
		s.url, s.seen = hubtest.PrivateRepository(t, s.token)
		p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: s.account, Repository: s.url, Push: true,
			Forge: core.ProjectForgeInput{Credential: &core.ProjectCredential{Kind: core.CredentialToken, Token: s.token}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
			t.Fatalf("expected the private project ready with its token, got %s %v %s", p.State, err, p.FailureReason)
		}
		s.project = p
	}
	for _, s := range sides {
		r := h.Call("POST", "/v1/api/workspaces", s.key, map[string]any{"projectId": s.project.ID, "agent": "agent_1", "model": "m", "prompt": "write result"}).Expect(t, 201, "")
		id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
		if ws := hubtest.WaitForAs(t, h, s.key, id, "idle", hubtest.IdleAfterTurns(1)); ws["pushed"] != true {
			t.Fatalf("expected the branch pushed with the project's token, got %v", ws)
		}
	}
	for i, s := range sides {
		other := sides[1-i]
		seen := s.seen()
		if !slices.Contains(seen, s.token) {
			t.Errorf("repository %d: expected its project's token, saw %q", i, seen)
		}
		if slices.Contains(seen, other.token) || slices.Contains(seen, hubToken) {
			t.Errorf("repository %d was sent another project's or the hub's token: %q", i, seen)
		}
		list := h.Call("GET", "/v1/api/projects", s.key, nil).Expect(t, 200, "")
		if bytes.Contains(list.Raw, []byte(s.token)) {
			t.Errorf("the project list shows the token: %s", list.Raw)
		}
		var sealed []byte
		if err := h.PG().DB().GetContext(ctx, &sealed, `SELECT credential_sealed FROM projects WHERE id = $1`, s.project.ID); err != nil {
			t.Fatal(err)
		}
		if len(sealed) == 0 || bytes.Contains(sealed, []byte(s.token)) {
			t.Errorf("expected the credential sealed at rest, got %q", sealed)
		}
	}
	// A sealed credential copied to the other project's row does not open there: it is
	// bound to its project, so the other project's git gets no credential from it.
	if _, err := h.PG().DB().ExecContext(ctx, `UPDATE projects SET credential_sealed = (SELECT credential_sealed FROM projects WHERE id = $1) WHERE id = $2`,
		sides[0].project.ID, sides[1].project.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.Admin.RefreshProject(ctx, sides[1].project.ID); err == nil || strings.Contains(err.Error(), sides[0].token) {
		t.Fatalf("expected a credential moved to another project refused, got %v", err)
	}
}
