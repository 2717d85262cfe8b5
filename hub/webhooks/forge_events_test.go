package webhooks_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	forgebot "github.com/wshub/wshub/bots/forge"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/giteatest"
)

// withForgeEvents turns the forges' front-end on.
func withForgeEvents() hubtest.Option {
	return hubtest.WithConfig(func(c *hub.Config) { c.ForgeEvents = true })
}

// The loop on a real Gitea that delivers its webhooks to the hub on loopback (one
// Gitea for all of it): an issue comment naming the handle starts a workspace on the
// project with the issue as context; the hub answers with one comment, edited as the
// work goes, that ends with the link of the pull request the workspace opened. The
// same asked first by someone who cannot write to the repository starts nothing, and
// the comment says why. A review on that pull request is the workspace's next turn,
// whose push updates the pull request and whose reply is the hub's comment there; a
// failed commit status on its new head is the turn after (--fix-checks 1). The hub's
// own comments, delivered back to it, start nothing.
func TestForgeLoopOnARealGitea(t *testing.T) {
	t.Parallel()
	gt := giteatest.Start(t)
	h := hubtest.StartDelivering(t, withForgeEvents())
	ctx := context.Background()
	repo := gt.NewRepo(t, "app")
	p := h.NewForgeProject(repo, core.ForgeGitea, core.PullRequestsReady, gt.AdminToken)
	secret := "gitea-webhook-secret"
	if _, err := h.Service.ForgeAdmin.SetForgeEvents(ctx, p.ID, core.ForgeEventsInput{Secret: &secret}); err != nil {
		t.Fatal(err)
	}
	// The account's agent and model come from its newest workspace, as for chat.
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": h.Project.ID, "agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	if _, _, err := gt.Client.CreateRepoHook(gt.AdminUser, "app", sdk.CreateHookOption{Type: sdk.HookTypeGitea, Active: true,
		Events: []string{"issue_comment", "pull_request_comment", "pull_request_review", "status"},
		Config: map[string]string{"url": h.URL + "/forge/gitea/events", "content_type": "json", "secret": secret}}); err != nil {
		t.Fatal(err)
	}
	issue, _, err := gt.Client.CreateIssue(gt.AdminUser, "app", sdk.CreateIssueOption{Title: "Needs a forge file",
		Body: "The forge file is missing."})
	if err != nil {
		t.Fatal(err)
	}
	// The hub's comment in an issue or pull request, whatever it says yet.
	hubCommentIn := func(number int64) (*sdk.Comment, error) {
		cs, _, err := gt.Client.ListIssueComments(gt.AdminUser, "app", number, sdk.ListIssueCommentOptions{})
		if err != nil {
			return nil, err
		}
		var mine []*sdk.Comment
		for _, c := range cs {
			if strings.Contains(c.Body, core.ForgeCommentMark) {
				mine = append(mine, c)
			}
		}
		if len(mine) != 1 {
			return nil, fmt.Errorf("expected one comment of the hub's, got %d of %d", len(mine), len(cs))
		}
		return mine[0], nil
	}
	hubComment := func() (*sdk.Comment, error) { return hubCommentIn(issue.Index) }
	// Someone who cannot write to the repository (it is public: anyone may comment)
	// asks first: nothing starts, and the hub says why.
	name, token := gt.NewUser(t)
	stranger, err := sdk.NewClient(gt.URL, sdk.SetToken(token), sdk.SetGiteaVersion(""))
	if err != nil {
		t.Fatal(err)
	}
	asked := time.Now()
	if _, _, err := stranger.CreateIssueComment(gt.AdminUser, "app", issue.Index, sdk.CreateIssueCommentOption{
		Body: "@wshub write evil"}); err != nil {
		t.Fatal(err)
	}
	eventually.Value(t, time.Minute, "the hub's comment saying why nothing started", func() (*sdk.Comment, error) {
		c, err := hubComment()
		if err == nil && !strings.Contains(c.Body, forgebot.NotAllowed) {
			err = fmt.Errorf("the comment says %q", c.Body)
		}
		return c, err
	})
	t.Logf("a forge event to the hub's first comment back: %v", time.Since(asked).Round(time.Millisecond))
	if n := projectWorkspaces(t, h, p.ID); n != 0 {
		t.Fatalf("expected nothing started for %s, got %d workspaces", name, n)
	}
	if _, _, err := gt.Client.CreateIssueComment(gt.AdminUser, "app", issue.Index, sdk.CreateIssueCommentOption{
		Body: "@wshub write forge"}); err != nil {
		t.Fatal(err)
	}
	pr := eventually.Value(t, 2*time.Minute, "the pull request", func() (*sdk.PullRequest, error) {
		prs, _, err := gt.Client.ListRepoPullRequests(gt.AdminUser, "app", sdk.ListPullRequestsOptions{State: sdk.StateAll})
		if err != nil || len(prs) != 1 {
			return nil, fmt.Errorf("expected one pull request, got %d (%v)", len(prs), err)
		}
		return prs[0], nil
	})
	final := eventually.Value(t, time.Minute, "the hub's comment done, ending with the pull request's link", func() (*sdk.Comment, error) {
		c, err := hubComment()
		if err != nil {
			return nil, err
		}
		body := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(c.Body), core.ForgeCommentMark))
		if !strings.Contains(body, "Done.") || !strings.HasSuffix(body, pr.HTMLURL) {
			return nil, fmt.Errorf("the comment says %q", c.Body)
		}
		return c, nil
	})
	t.Logf("the hub's comment: %q", final.Body)
	if !strings.Contains(final.Body, "wrote forge.txt") {
		t.Errorf("expected the agent's reply in the comment, got %q", final.Body)
	}
	// The workspace was asked with the issue as its context, as the comment's author.
	var text, author, profile string
	if err := h.PG().DB().QueryRowContext(ctx, `SELECT m.author_id, COALESCE(m.author_url, ''), w.origin FROM messages m
		JOIN workspaces w ON w.id = m.workspace_id WHERE w.project_id = $1 AND m.role = 'user'`, p.ID).Scan(&author, &profile, &text); err != nil {
		t.Fatal(err)
	}
	if author != gt.AdminUser || text != core.ForgeGitea || profile != strings.TrimSuffix(gt.URL, "/")+"/"+gt.AdminUser {
		t.Errorf("expected the message by %s (their Gitea profile) from gitea, got by %q (%q) from %q", gt.AdminUser, author, profile, text)
	}
	if n := projectWorkspaces(t, h, p.ID); n != 1 {
		t.Errorf("expected one workspace on the project, got %d", n)
	}
	if pr.Head == nil || !strings.HasPrefix(pr.Title, "write forge") {
		t.Fatalf("expected the pull request titled by the request, got %q", pr.Title)
	}

	// A review on the pull request: the workspace's next turn, whose push updates the
	// pull request and whose reply is the hub's comment there.
	fix := 1
	if _, err := h.Service.ForgeAdmin.SetForgeEvents(ctx, p.ID, core.ForgeEventsInput{FixChecks: &fix}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gt.Client.CreatePullReview(gt.AdminUser, "app", pr.Index, sdk.CreatePullReviewOptions{State: sdk.ReviewStateComment,
		Body: "write review"}); err != nil {
		t.Fatal(err)
	}
	replied := func(what, reply string) {
		t.Helper()
		eventually.Value(t, 2*time.Minute, "the hub's comment in the pull request saying "+reply, func() (*sdk.Comment, error) {
			c, err := hubCommentIn(pr.Index)
			if err == nil && !strings.Contains(c.Body, reply) {
				err = fmt.Errorf("%s: the comment says %q", what, c.Body)
			}
			return c, err
		})
	}
	replied("the review", "wrote review.txt")
	head := eventually.Value(t, time.Minute, "the pull request updated by the review's push", func() (string, error) {
		got, _, err := gt.Client.GetPullRequest(gt.AdminUser, "app", pr.Index)
		if err == nil && got.Head.Sha == pr.Head.Sha {
			err = fmt.Errorf("the pull request's head is still %s", got.Head.Sha)
		}
		if err != nil {
			return "", err
		}
		return got.Head.Sha, nil
	})
	// A failed commit status on the new head: the turn after, quoting its description.
	if _, _, err := gt.Client.CreateStatus(gt.AdminUser, "app", head, sdk.CreateStatusOption{State: sdk.StatusFailure,
		Context: "ci/unit", Description: "TestX failed"}); err != nil {
		t.Fatal(err)
	}
	replied("the failed check", "The check ci/unit failed: TestX failed")
	var wsID string
	if err := h.PG().DB().QueryRowContext(ctx, `SELECT id FROM workspaces WHERE project_id = $1`, p.ID).Scan(&wsID); err != nil {
		t.Fatal(err)
	}
	if sent := userMessages(t, h, wsID); len(sent) != 3 || sent[1] != "write review" || !strings.HasPrefix(sent[2], "The check ci/unit failed: TestX failed") {
		t.Errorf("expected the request, the review and the failed check, and none of the hub's comments, got %q", sent)
	}
}
