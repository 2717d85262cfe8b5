package webhooks_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// writerLogin is the login of the person on each fake who may write to the
// repository (forgeFake.comment's author unless a stranger).
var writerLogin = map[string]string{core.ForgeGitHub: "octocat", core.ForgeGitLab: "tanuki"}

// linkForgeWriter makes Ada a member of the hub's account, by her email, and links
// the fake's writer login to her, as `wshub admin member link` does. It returns the
// writer's profile page on the fake.
func linkForgeWriter(t *testing.T, h *hubtest.Hub, kind, web string) string {
	t.Helper()
	ctx := context.Background()
	email, _ := core.NewIdentity(core.IdentityEmail, "ada@example.com")
	if _, err := h.Service.Admin.AddMember(ctx, h.Account.ID, email, core.RoleMember, "Ada Lovelace"); err != nil {
		t.Fatal(err)
	}
	profile := strings.TrimSuffix(web, "/acme/app") + "/" + writerLogin[kind]
	login, err := core.NewIdentity(kind, profile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.ForgeAdmin.LinkForgeLogin(ctx, h.Account.ID, email, login); err != nil {
		t.Fatal(err)
	}
	return profile
}

// checkForgeAuthor checks that the project's one workspace's first message is the
// writer's, with their profile page, and that its turn's commit names Ada, the member
// the login is linked to, as co-author.
func checkForgeAuthor(t *testing.T, h *hubtest.Hub, p *core.Project, kind, profile string) {
	t.Helper()
	var wsID string
	if err := h.PG().DB().QueryRowContext(context.Background(), `SELECT id FROM workspaces WHERE project_id = $1`, p.ID).Scan(&wsID); err != nil {
		t.Fatal(err)
	}
	r := h.Call("GET", "/v1/api/workspaces/"+wsID+"/messages", h.Key, nil).Expect(t, 200, "")
	first := r.Body["messages"].([]any)[0].(map[string]any)
	a, _ := first["author"].(map[string]any)
	login := writerLogin[kind]
	if a["kind"] != kind || a["id"] != login || a["name"] != login || a["url"] != profile {
		t.Errorf("expected the first message by %s %s at %s, got %v", kind, login, profile, a)
	}
	checkout := filepath.Join(h.Config.DataDir, "workspaces", wsID, "checkout")
	body := hubtest.Git(t, checkout, "log", "-1", "--format=%B", "HEAD")
	if !strings.HasSuffix(strings.TrimSpace(body), "\n\nCo-authored-by: Ada Lovelace <ada@example.com>") {
		t.Errorf("expected the turn's commit to name Ada as co-author, got %q", body)
	}
}
