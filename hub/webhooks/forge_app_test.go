package webhooks_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// An account's GitHub App (GitHub's fake, deliveries typed by go-github): a delivery
// of an installation the account has is verified by the App's secret and reaches the
// account's project of its repository, which has no secret of its own, and not
// another account's project of the same repository; one signed otherwise is 401; an
// installation no account has is 200, ignored and counted.
func TestAGitHubAppsInstallationReachesItsAccountsProject(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t, withForgeEvents())
	f := githubFake()
	repo, web, token := f.start(t)
	ctx := context.Background()
	// Another account's project of the same repository, with a secret of its own, set
	// first: a delivery routed by repository alone would find it first.
	other, _ := h.NewAccount(true)
	op, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: other.ID, Repository: repo,
		Forge: core.ProjectForgeInput{Forge: gh.Ptr(core.ForgeGitHub)}})
	if err != nil {
		t.Fatal(err)
	}
	setSecret(t, h, op, "other-secret")

	p := h.NewForgeProject(repo, f.kind, core.PullRequestsOff, token)
	const appSecret = "app-secret"
	if _, err := h.Service.ForgeAdmin.SetGitHubApp(ctx, h.Account.ID, core.GitHubAppInput{AppID: gh.Ptr(int64(12)), Secret: gh.Ptr(appSecret),
		Installations: []int64{77}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Service.ForgeAdmin.SetForgeEvents(ctx, p.ID, core.ForgeEventsInput{On: true}); err != nil {
		t.Fatalf("expected the project's events on without a secret of its own, got %v", err)
	}
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": h.Project.ID, "agent": "agent_1", "model": "m"}).Expect(t, 201, "")

	body := fromInstallation(t, f.comment(web, 41, "@wshub write app", false), 77)
	stranger := fromInstallation(t, f.comment(web, 42, "@wshub write app", false), 99)
	checkDeliveries(t, h, f.kind, []delivery{
		{"the installation's delivery signed otherwise", body, f.headers("d-1", "other-secret", body, true), 401, 0},
		{"the installation's delivery signed by the App", body, f.headers("d-1", appSecret, body, true), 202, 1},
		{"an installation no account has", stranger, f.headers("d-2", appSecret, stranger, true), 200, 1},
	})
	if !metricCounted(t, h, "wshub_forge_events_unknown_installation_total", f.kind, 1) {
		t.Error("expected the unknown installation's delivery counted once")
	}
	eventually.Eventually(t, time.Minute, "the hub's comment done", func() bool {
		cs := f.comments()
		return len(cs) == 1 && strings.Contains(cs[0], "wrote app.txt")
	})
	if n, m := projectWorkspaces(t, h, p.ID), projectWorkspaces(t, h, op.ID); n != 1 || m != 0 {
		t.Errorf("expected the work on the App's account's project (1, 0), got %d and %d", n, m)
	}
}

// fromInstallation is a GitHub delivery's body as the App's installation sends it.
func fromInstallation(t *testing.T, body []byte, installation int64) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["installation"] = map[string]any{"id": installation}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
