package webhooks_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
	glfake "github.com/wshub/wshub/internal/testkit/forgetest/gitlab"
)

// A project set to open draft pull requests on GitHub (the fake, through go-github):
// the first push opens one from the workspace's branch, the reply, the status and the
// webhook event carry it; a second turn's push updates its body and opens no second;
// a merge on the forge shows as merged when the workspace is read; and a lost record
// followed by Open pull request adopts the existing one instead of opening another.
func TestAPushOpensThenUpdatesOnePullRequest(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t, hubtest.WithPublicURL("https://hub.example.com"))
	ctx := context.Background()
	gh := ghfake.Start(t)
	const token = "ghp_projectToken_pr1"
	p := githubProject(t, h, gh, "app", token, core.PullRequestsDraft)
	rc := hubtest.NewReceiver(t, nil)
	hubtest.AddWebhook(t, h, h.Key, rc.URL)

	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "write result\nand say why"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	pulls := gh.Pulls("acme", "app")
	if len(pulls) != 1 {
		t.Fatalf("expected one pull request, got %+v", pulls)
	}
	pr := pulls[0]
	if pr.Head != ws["branch"] || pr.Base != "main" || pr.Title != "write result" || !pr.Draft {
		t.Errorf("pull request: head %q base %q title %q draft %v", pr.Head, pr.Base, pr.Title, pr.Draft)
	}
	for _, want := range []string{id, "https://hub.example.com/app/workspaces/" + id, "1. write result"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("expected the body to hold %q:\n%s", want, pr.Body)
		}
	}
	url := gh.URL + "/acme/app/pull/1"
	msgs, _ := hubtest.Messages(t, h, id)
	if !strings.Contains(msgs[1].Text, "Opened pull request #1: "+url) {
		t.Errorf("expected the reply to carry the pull request, got %q", msgs[1].Text)
	}
	if got, _ := ws["pullRequest"].(map[string]any); got["url"] != url || got["number"] != float64(1) || got["state"] != "open" {
		t.Errorf("expected the status's pullRequest, got %v", ws["pullRequest"])
	}
	if ev := rc.Wait(t, 1)[0].Event; ev.PullRequest == nil || ev.PullRequest.URL != url || ev.PullRequest.State != "open" {
		t.Errorf("expected the event's pullRequest, got %+v", ev.PullRequest)
	}

	// A second turn's push updates the body; still one pull request.
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "write second"}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "idle after the second turn", hubtest.IdleAfterTurns(2))
	if pulls = gh.Pulls("acme", "app"); len(pulls) != 1 || !strings.Contains(pulls[0].Body, "2. write second") || pulls[0].Title != "write result" {
		t.Fatalf("expected the one pull request's body updated, got %+v", pulls)
	}
	if msgs, _ = hubtest.Messages(t, h, id); !strings.Contains(msgs[3].Text, "Updated pull request #1: "+url) {
		t.Errorf("expected the second reply to say it updated, got %q", msgs[3].Text)
	}

	// Merged on the forge: a read after the minute shows it (the check is moved back
	// a minute instead of waiting for one).
	gh.Merge("acme", "app", 1)
	if _, err := h.PG().DB().ExecContext(ctx, `UPDATE workspaces SET pull_checked_at = now() - interval '2 minutes' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	hubtest.WaitFor(t, h, id, "the merge seen", func(ws map[string]any) bool {
		got, _ := ws["pullRequest"].(map[string]any)
		return got["state"] == "merged"
	})

	// The record lost (a crash between the forge's answer and the store): asking
	// again finds the existing one by its head; no second is opened.
	if _, err := h.PG().DB().ExecContext(ctx, `UPDATE workspaces SET pull_number = 0, pull_url = '', pull_state = '' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	r = h.Call("POST", "/v1/api/workspaces/"+id+"/pull-request", h.Key, nil).Expect(t, 200, "")
	if got, _ := r.Body["workspace"].(map[string]any)["pullRequest"].(map[string]any); got["number"] != float64(1) || got["state"] != "merged" {
		t.Errorf("expected the existing pull request adopted, got %v", got)
	}
	if pulls = gh.Pulls("acme", "app"); len(pulls) != 1 {
		t.Errorf("expected still one pull request, got %d", len(pulls))
	}
}

// A project reached through a GitHub App: the hub mints an installation token for its
// mirror, its push and its pull request, and reuses it (one minted); the App's key is
// sealed like any credential.
func TestAGitHubAppProjectIsReachedWithOneInstallationToken(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	ctx := context.Background()
	gh := ghfake.Start(t)
	repo := gh.NewRepo(t, "acme", "service")
	key := gh.NewApp(t, 4242)
	gh.Install(4242, 99, ghfake.Write, "acme/service")
	forge, mode := core.ForgeGitHub, core.PullRequestsReady
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Push: true,
		Forge: core.ProjectForgeInput{Forge: &forge, PullRequests: &mode, Credential: &core.ProjectCredential{
			Kind: core.CredentialGitHubApp, AppID: 4242, InstallationID: 99, AppKey: string(key)}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		t.Fatalf("expected the App's token to mirror the repository: %s %v %s", p.State, err, p.FailureReason)
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "write result"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	pulls := gh.Pulls("acme", "service")
	if len(pulls) != 1 || pulls[0].Draft || pulls[0].Author == "" {
		t.Fatalf("expected one ready pull request opened by the App, got %+v", pulls)
	}
	if n := gh.TokensMinted(99); n != 1 {
		t.Errorf("expected one installation token for the mirror, the push and the pull request, got %d", n)
	}
	var sealed []byte
	if err := h.PG().DB().GetContext(ctx, &sealed, `SELECT credential_sealed FROM projects WHERE id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "PRIVATE KEY") {
		t.Error("the App's private key is stored in the clear")
	}
}

// A forge's refusal is shown in its words in the reply, kept on the workspace, and not
// retried by itself: here the base branch is gone from the repository after the
// project was added, so GitHub will not open a pull request into it.
func TestAForgesRefusalIsShownInItsWords(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	ctx := context.Background()
	gh := ghfake.Start(t)
	const token = "ghp_projectToken_refused"
	p := githubProject(t, h, gh, "gone", token, core.PullRequestsReady)
	// A first turn that changes nothing (no push) sets the workspace up from main.
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "hello"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	hubtest.Git(t, gh.BareRepo("acme", "gone"), "update-ref", "-d", "refs/heads/main")
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "write result"}).Expect(t, 200, "")
	ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(2))
	msgs, _ := hubtest.Messages(t, h, id)
	if !strings.Contains(msgs[3].Text, "Could not open a pull request: Validation Failed") || strings.Contains(msgs[3].Text, token) {
		t.Errorf("expected GitHub's refusal in words, got %q", msgs[3].Text)
	}
	if ws["pushed"] != true || ws["pullRequest"] != nil || len(gh.Pulls("acme", "gone")) != 0 {
		t.Errorf("expected the branch pushed and no pull request, got %v", ws)
	}
	var kept string
	if err := h.PG().DB().GetContext(ctx, &kept, `SELECT pull_error FROM workspaces WHERE id = $1`, id); err != nil || !strings.Contains(kept, "Validation Failed") {
		t.Errorf("expected the refusal kept on the workspace, got %q %v", kept, err)
	}
	// Asking by hand says the same, as a 409 in words.
	r = h.Call("POST", "/v1/api/workspaces/"+id+"/pull-request", h.Key, nil).Expect(t, 409, "pull_request_refused")
	if msg, _ := r.Body["detail"].(string); !strings.Contains(msg, "Validation Failed") {
		t.Errorf("expected the forge's words in the 409, got %v", r.Body)
	}
}

// A workspace whose runtime is a separate process (the process provider): the hub
// pushes its copy of the branch with the project's token and opens the pull request;
// the runtime process never holds the token, in its environment or arguments.
func TestARemoteWorkspacesPushOpensThePullRequestWithoutTheRuntimeSeeingTheToken(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	gh := ghfake.Start(t)
	const token = "ghp_projectToken_remote"
	p := githubProject(t, h, gh, "remote", token, core.PullRequestsReady)
	id := hubtest.CreateOn(t, h, "process", "write remote", "projectId", p.ID)
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	msgs, _ := hubtest.Messages(t, h, id)
	if !strings.Contains(msgs[1].Text, "Opened pull request #1: "+gh.URL+"/acme/remote/pull/1") {
		t.Fatalf("expected the reply to carry the pull request, got %q", msgs[1].Text)
	}
	if pulls := gh.Pulls("acme", "remote"); len(pulls) != 1 || pulls[0].Title != "write remote" {
		t.Fatalf("expected one pull request, got %+v", pulls)
	}
	pid := hubtest.RuntimePID(t, h, id)
	for _, f := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), token) {
			t.Errorf("the runtime process's %s holds the project's token", f)
		}
	}
}

// githubProject adds a project on a new repository acme/name of the fake GitHub,
// reached with its own token (granted write there), whose pull requests are mode.
func githubProject(t *testing.T, h *hubtest.Hub, gh *ghfake.Server, name, token, mode string) *core.Project {
	t.Helper()
	repo := gh.NewRepo(t, "acme", name)
	gh.Grant(token, "acme", name, ghfake.Write)
	return h.NewForgeProject(repo, core.ForgeGitHub, mode, token)
}

// Open pull request asked at once through two replicas, twice each (a double click, a
// retry): one pull request is opened, and every answer names it.
func TestConcurrentAsksOpenOnePullRequest(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	other := h.Replica(t)
	gh := ghfake.Start(t)
	p := githubProject(t, h, gh, "race", "ghp_projectToken_race", core.PullRequestsOff)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "write race"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	if ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1)); ws["pushed"] != true || ws["pullRequest"] != nil {
		t.Fatalf("expected the branch pushed and no pull request yet (off), got %v", ws)
	}
	answers := make(chan *hubtest.Response, 4)
	for _, hub := range []*hubtest.Hub{h, other, h, other} {
		go func() {
			a, err := hub.Try("POST", "/v1/api/workspaces/"+id+"/pull-request", h.Key, nil)
			if err != nil {
				a = &hubtest.Response{Body: map[string]any{"error": err.Error()}}
			}
			answers <- a
		}()
	}
	for range 4 {
		a := <-answers
		ws, _ := a.Body["workspace"].(map[string]any)
		got, _ := ws["pullRequest"].(map[string]any)
		if a.Status != 200 || got["number"] != float64(1) {
			t.Errorf("expected every answer to name pull request #1, got %d %v", a.Status, a.Body)
		}
	}
	if pulls := gh.Pulls("acme", "race"); len(pulls) != 1 {
		t.Fatalf("expected one pull request, got %d", len(pulls))
	}
}

// A project on GitLab (the fake, through GitLab's client-go) in a subgroup, with a
// project access token sent as oauth2's password: the push opens a draft merge
// request, and its web URL and iid reach the reply and the status.
func TestAPushOpensADraftMergeRequestOnGitLab(t *testing.T) {
	t.Parallel()
	h := hubtest.StartDelivering(t)
	ctx := context.Background()
	gl := glfake.Start(t)
	const token = "glpat-projectToken"
	repo := gl.NewRepo(t, "acme/platform/api")
	gl.Grant(token, "acme/platform/api", glfake.Write)
	forge, mode := core.ForgeGitLab, core.PullRequestsDraft
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Push: true,
		Forge: core.ProjectForgeInput{Forge: &forge, PullRequests: &mode,
			Credential: &core.ProjectCredential{Kind: core.CredentialToken, User: "oauth2", Token: token}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		t.Fatalf("project: %s %v %s", p.State, err, p.FailureReason)
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "write gitlab"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	mrs := gl.MergeRequests("acme/platform/api")
	if len(mrs) != 1 || !mrs[0].Draft() || mrs[0].SourceBranch != ws["branch"] || mrs[0].TargetBranch != "main" || !strings.Contains(mrs[0].Description, id) {
		t.Fatalf("expected one draft merge request from the branch, got %+v", mrs)
	}
	got, _ := ws["pullRequest"].(map[string]any)
	if got["number"] != float64(mrs[0].IID) || got["state"] != "open" || !strings.Contains(got["url"].(string), "/acme/platform/api/-/merge_requests/") {
		t.Errorf("expected the merge request in the status, got %v", got)
	}
	msgs, _ := hubtest.Messages(t, h, id)
	if !strings.Contains(msgs[1].Text, "Opened pull request #1: "+got["url"].(string)) {
		t.Errorf("expected the reply to link the merge request, got %q", msgs[1].Text)
	}
}
