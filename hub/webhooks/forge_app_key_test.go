package webhooks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/forgetest"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// An account's GitHub App with its private key (the fake GitHub checks the App's JWT
// with its public key): a project of the account with no credential of its own, on a
// repository the App is installed on, is mirrored, its workspace's branch pushed and
// its pull request opened with one installation token, the installation found once by
// the repository. The key is in no git process's arguments or environment, and the
// token only in the environment git's credential helper reads. A repository the App is
// not on, and a project of an account without the App, keep the hub-wide token.
func TestAnAccountsGitHubAppReachesItsProjectsWithoutACredential(t *testing.T) {
	t.Parallel()
	const hubToken = "ghp_hubwide_appKey"
	gitLog := filepath.Join(t.TempDir(), "git.log")
	h := hubtest.StartDelivering(t, hubtest.WithConfig(func(c *hub.Config) {
		c.GitHTTPSToken = hubToken
		c.Git = forgetest.RecordingGit(t, gitLog)
	}))
	ctx := context.Background()
	fake := ghfake.Start(t)
	repo := fake.NewRepo(t, "acme", "service")
	key := fake.NewApp(t, 4343)
	fake.Install(4343, 77, ghfake.Write, "acme/service")
	if _, err := h.Service.ForgeAdmin.SetGitHubApp(ctx, h.Account.ID, core.GitHubAppInput{AppID: gh.Ptr(int64(4343)), Secret: gh.Ptr("app-secret"),
		PrivateKey: gh.Ptr(string(key)), Installations: []int64{77}}); err != nil {
		t.Fatal(err)
	}
	p := appProject(t, h, h.Account.ID, repo)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "write result"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	if ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1)); ws["pushed"] != true {
		t.Fatalf("expected the branch pushed with the App's token, got %v", ws)
	}
	if pulls := fake.Pulls("acme", "service"); len(pulls) != 1 || pulls[0].Author != "app-4343[bot]" {
		t.Fatalf("expected one pull request opened by the App's installation, got %+v", pulls)
	}
	tokens := fake.InstallationTokens(77)
	if len(tokens) != 1 {
		t.Fatalf("expected one installation token for the mirror, the push and the pull request, got %d", len(tokens))
	}
	if n := fake.InstallationLookups("acme", "service"); n != 1 {
		t.Errorf("expected the repository's installation asked once, got %d", n)
	}

	// A repository the App is not installed on, and another account without the App:
	// their projects are mirrored with the hub-wide token, as before; the App is
	// asked only of its own account's repository.
	for _, name := range []string{"elsewhere", "plain"} {
		fake.Grant(hubToken, "acme", name, ghfake.Write)
	}
	appProject(t, h, h.Account.ID, fake.NewRepo(t, "acme", "elsewhere"))
	other, _ := h.NewAccount(true)
	appProject(t, h, other.ID, fake.NewRepo(t, "acme", "plain"))
	if n, m := fake.InstallationLookups("acme", "elsewhere"), fake.InstallationLookups("acme", "plain"); n != 1 || m != 0 {
		t.Errorf("expected the App asked of its account's repository only (1, 0), got %d and %d", n, m)
	}

	logged, err := os.ReadFile(gitLog)
	if err != nil {
		t.Fatal(err)
	}
	pemBody := strings.Split(strings.TrimSpace(string(key)), "\n")[1] // a line of the key's base64
	if strings.Contains(string(logged), pemBody) || strings.Contains(string(logged), "PRIVATE KEY") {
		t.Error("the App's private key reached a git process")
	}
	var tokenInEnv, pushes int
	for line := range strings.Lines(string(logged)) {
		switch {
		case strings.HasPrefix(line, "ARGS ") && strings.Contains(line, tokens[0]):
			t.Errorf("the installation token is on git's command line: %s", line)
		case strings.HasPrefix(line, "ENV WSHUB_GIT_HTTPS_TOKEN="+tokens[0]):
			tokenInEnv++
		case strings.HasPrefix(line, "ENV ") && strings.Contains(line, tokens[0]):
			t.Errorf("the installation token is in git's environment beside the helper's variable: %s", line)
		}
		if strings.HasPrefix(line, "ARGS ") && strings.Contains(line, " push ") {
			pushes++
		}
	}
	if tokenInEnv == 0 || pushes == 0 {
		t.Errorf("expected git's pushes to carry the token for its credential helper (%d pushes, %d runs with the token)", pushes, tokenInEnv)
	}
}

// appProject adds a GitHub project of account on repo, pushing and opening ready pull
// requests, with no credential of its own, and mirrors it.
func appProject(t *testing.T, h *hubtest.Hub, account, repo string) *core.Project {
	t.Helper()
	ctx := context.Background()
	forge, mode := core.ForgeGitHub, core.PullRequestsReady
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: account, Repository: repo, Push: true,
		Forge: core.ProjectForgeInput{Forge: &forge, PullRequests: &mode}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		t.Fatalf("expected the project mirrored, got %s %v %s", p.State, err, p.FailureReason)
	}
	return p
}

// The same App's events: an issue comment its installation delivers, on the
// repository of the account's project that has no credential of its own, is asked of
// GitHub (the commenter's permission, the comments) and answered in the issue
// with the installation's token, the pull request opened by the App.
func TestAnAccountsGitHubAppAnswersItsEventsWithItsInstallationsToken(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t, withForgeEvents())
	ctx := context.Background()
	fake := ghfake.Start(t)
	repo := fake.NewRepo(t, "acme", "app")
	fake.SetPermission("acme", "app", "octocat", "write")
	key := fake.NewApp(t, 4344)
	fake.Install(4344, 78, ghfake.Write, "acme/app")
	const appSecret = "app-secret"
	if _, err := h.Service.ForgeAdmin.SetGitHubApp(ctx, h.Account.ID, core.GitHubAppInput{AppID: gh.Ptr(int64(4344)), Secret: gh.Ptr(appSecret),
		PrivateKey: gh.Ptr(string(key)), Installations: []int64{78}}); err != nil {
		t.Fatal(err)
	}
	p := appProject(t, h, h.Account.ID, repo)
	if _, err := h.Service.ForgeAdmin.SetForgeEvents(ctx, p.ID, core.ForgeEventsInput{On: true}); err != nil {
		t.Fatal(err)
	}
	// The account's agent and model, which forge work starts with.
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": h.Project.ID, "agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	f := githubFake()
	body := fromInstallation(t, f.comment(fake.URL+"/acme/app", 41, "@wshub write app", false), 78)
	if got := deliver(t, h, "/forge/github/events", body, f.headers("d-1", appSecret, body, true)...); got != 202 {
		t.Fatalf("expected the App's delivery taken, got %d", got)
	}
	eventually.Eventually(t, time.Minute, "the hub's comment ending with the pull request", func() bool {
		cs := fake.Comments("acme", "app", 7)
		return len(cs) == 1 && strings.Contains(cs[0].Body, fake.URL+"/acme/app/pull/1")
	})
	if cs, pulls := fake.Comments("acme", "app", 7), fake.Pulls("acme", "app"); cs[0].Author != "app-4344[bot]" || len(pulls) != 1 || pulls[0].Author != "app-4344[bot]" {
		t.Errorf("expected the comment and the pull request the App's, got %q and %+v", cs[0].Author, pulls)
	}
	if n := fake.TokensMinted(78); n != 1 {
		t.Errorf("expected one installation token for every call, got %d", n)
	}
}
