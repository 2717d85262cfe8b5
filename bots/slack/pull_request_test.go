package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	ghfake "github.com/wshub/wshub/internal/forgetest/github"
)

// From a Slack thread to a pull request: a mention starts a workspace on a project
// that opens pull requests (GitHub, the fake, through go-github); the turn pushes, the
// pull request is opened, and the thread's reply carries its link; `pr` in the thread
// links the same one.
func TestAMentionEndsInAPullRequestLinkedInTheThread(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, false)
	ctx := context.Background()
	gh := ghfake.Start(t)
	repo := gh.NewRepo(t, "acme", "chat")
	gh.Grant("ghp_chat", "acme", "chat", ghfake.Write)
	forge, mode := core.ForgeGitHub, core.PullRequestsReady
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Push: true,
		Forge: core.ProjectForgeInput{Forge: &forge, PullRequests: &mode,
			Credential: &core.ProjectCredential{Kind: core.CredentialToken, Token: "ghp_chat"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.BindChat(ctx, &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
		AccountID: h.Account.ID, ProjectID: p.ID, Agent: "agent_1", Model: "test-model"}); err != nil {
		t.Fatal(err)
	}
	const root = "1700000100.000100"
	deliver(t, h, eventBody("EvPR01", mention(root, "", "<@"+botUser+"> write feature")))
	url := gh.URL + "/acme/chat/pull/1"
	posts := f.waitPosts(t, root, "the reply with the pull request", func(p []post) bool { return len(p) >= 1 })
	if !strings.Contains(posts[0].Text, "Opened pull request #1: "+url) {
		t.Fatalf("expected the thread's reply to link the pull request, got %q", posts[0].Text)
	}
	pulls := gh.Pulls("acme", "chat")
	if len(pulls) != 1 || pulls[0].Title != "write feature" || !strings.Contains(pulls[0].Body, "Chat thread: https://app.slack.com/client/"+team+"/"+channel+"/thread/"+channel+"-"+root) {
		t.Fatalf("expected one pull request linking back to the thread, got %+v", pulls)
	}
	deliver(t, h, eventBody("EvPR02", mention("1700000101.000200", root, "<@"+botUser+"> pr")))
	posts = f.waitPosts(t, root, "the pr command's answer", func(p []post) bool { return len(p) >= 2 })
	if want := "Pull request #1 (open): " + url; posts[1].Text != want {
		t.Fatalf("expected %q, got %q", want, posts[1].Text)
	}
}
