package slack_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
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
	p := h.NewForgeProject(repo, core.ForgeGitHub, core.PullRequestsReady, "ghp_chat")
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

// On a project whose pull requests are off, the thread is offered an Open pull
// request button after the branch's first push (once, not after every push); a
// press opens it, and the offer's message becomes its link, without the button.
func TestTheOpenPullRequestButtonOpensOneAndLinksIt(t *testing.T) {
	t.Parallel()
	f := newFakeSlack(t)
	h := slackHub(t, f, false)
	ctx := context.Background()
	gh := ghfake.Start(t)
	repo := gh.NewRepo(t, "acme", "offer")
	gh.Grant("ghp_offer", "acme", "offer", ghfake.Write)
	p := h.NewForgeProject(repo, core.ForgeGitHub, core.PullRequestsOff, "ghp_offer")
	if err := h.Service.Admin.BindChat(ctx, &core.ChatBinding{Platform: core.PlatformSlack, TeamID: team,
		AccountID: h.Account.ID, ProjectID: p.ID, Agent: "agent_1", Model: "test-model"}); err != nil {
		t.Fatal(err)
	}
	const root = "1700000200.000100"
	deliver(t, h, eventBody("EvOF01", mention(root, "", "<@"+botUser+"> write offer")))
	posts := f.waitPosts(t, root, "the reply and the offer", func(p []post) bool { return len(p) >= 2 })
	offer := posts[1]
	wsID := buttonValue(offer.Blocks, "wshub_pull_request")
	if !strings.HasPrefix(wsID, "ws_") || !strings.Contains(offer.Text, "is pushed. Open a pull request from it?") {
		t.Fatalf("expected the offer with its button after the reply, got %+v", posts)
	}
	// A second pushed turn offers nothing more.
	deliver(t, h, eventBody("EvOF02", mention("1700000201.000200", root, "<@"+botUser+"> write again")))
	f.waitPosts(t, root, "the second reply", func(p []post) bool { return len(p) >= 3 })
	if len(gh.Pulls("acme", "offer")) != 0 {
		t.Fatal("a pull request was opened before anyone asked")
	}
	if status := press(t, h, blockActions("UHUMAN01", offer, root, "wshub_pull_request", wsID), signingSecret); status != 200 {
		t.Fatalf("expected the press answered 200 at once, got %d", status)
	}
	url := gh.URL + "/acme/offer/pull/1"
	updates := f.waitUpdates(t, offer.TS, "the offer's edit", func(u []post) bool { return len(u) >= 1 })
	if u := updates[0]; u.Text != "Pull request #1 (open): "+url || buttonValue(u.Blocks, "wshub_pull_request") != "" {
		t.Fatalf("expected the offer to become the link, without its button, got %+v", u)
	}
	if pulls := gh.Pulls("acme", "offer"); len(pulls) != 1 || pulls[0].Title != "write offer" {
		t.Fatalf("expected one pull request, got %+v", pulls)
	}
	offers := 0
	for _, p := range f.Posts() {
		if strings.Contains(p.Text, "Open a pull request from it?") {
			offers++
		}
	}
	if offers != 1 {
		t.Errorf("expected one offer in the thread, got %d", offers)
	}
}
