package webhooks_test

import (
	"context"
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/giteatest"
)

// Pull requests on a real Gitea (built by scripts/gitea.sh): the hub pushes over HTTP
// with the project's token and opens the pull request through Gitea's SDK; read back
// through Gitea's API it has the branch, the base, the title and the body; the second
// push updates it and opens no other; a merge in Gitea shows as merged on the
// workspace; and a branch Gitea protects is refused in Gitea's words.
func TestPullRequestsOnARealGitea(t *testing.T) {
	t.Parallel()
	gt := giteatest.Start(t)
	h := hubtest.StartDelivering(t)
	ctx := context.Background()
	repo := gt.NewRepo(t, "app")
	forge, mode := core.ForgeGitea, core.PullRequestsReady
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Push: true,
		Forge: core.ProjectForgeInput{Forge: &forge, PullRequests: &mode,
			Credential: &core.ProjectCredential{Kind: core.CredentialToken, User: gt.AdminUser, Token: gt.AdminToken}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		t.Fatalf("project: %s %v %s", p.State, err, p.FailureReason)
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"prompt": "write gitea"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	msgs, _ := hubtest.Messages(t, h, id)
	if !strings.Contains(msgs[1].Text, "Opened pull request #1: ") {
		t.Fatalf("expected the reply to carry the pull request, got %q", msgs[1].Text)
	}
	pr, _, err := gt.Client.GetPullRequest(gt.AdminUser, "app", 1)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Head.Ref != ws["branch"] || pr.Base.Ref != "main" || pr.Title != "write gitea" || !strings.Contains(pr.Body, id) {
		t.Errorf("pull request in Gitea: head %q base %q title %q body %q", pr.Head.Ref, pr.Base.Ref, pr.Title, pr.Body)
	}
	if got, _ := ws["pullRequest"].(map[string]any); got["url"] != pr.HTMLURL || got["state"] != "open" {
		t.Errorf("expected the status to link %s, got %v", pr.HTMLURL, got)
	}

	hubtest.Send(t, h, id, "write again")
	hubtest.WaitFor(t, h, id, "idle after the second turn", hubtest.IdleAfterTurns(2))
	if pr, _, err = gt.Client.GetPullRequest(gt.AdminUser, "app", 1); err != nil || !strings.Contains(pr.Body, "2. write again") {
		t.Fatalf("expected the body updated, got %v %q", err, pr.Body)
	}
	if all, _, err := gt.Client.ListRepoPullRequests(gt.AdminUser, "app", sdk.ListPullRequestsOptions{State: sdk.StateAll}); err != nil || len(all) != 1 {
		t.Fatalf("expected one pull request, got %d (%v)", len(all), err)
	}

	gt.Merge(t, "app", 1)
	if _, err := h.PG().DB().ExecContext(ctx, `UPDATE workspaces SET pull_checked_at = now() - interval '2 minutes' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	hubtest.WaitFor(t, h, id, "the merge seen", func(ws map[string]any) bool {
		got, _ := ws["pullRequest"].(map[string]any)
		return got["state"] == "merged"
	})

	// A branch Gitea protects: the push is refused, in Gitea's words.
	gt.ProtectBranch(t, "app", "ci/*")
	r = h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m",
		"branch": "ci/protected", "prompt": "write blocked"}).Expect(t, 201, "")
	blocked := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	hubtest.WaitFor(t, h, blocked, "idle", hubtest.IdleAfterTurns(1))
	msgs, _ = hubtest.Messages(t, h, blocked)
	if !strings.Contains(msgs[1].Text, "Push to `ci/protected` refused:") || !strings.Contains(msgs[1].Text, "protected branch") {
		t.Errorf("expected Gitea's refusal in words, got %q", msgs[1].Text)
	}
}
