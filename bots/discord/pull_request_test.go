package discord_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// On a project whose pull requests are off, the thread is offered an Open pull
// request button after the branch's first push; a press is acknowledged at once
// (deferred), the pull request is opened, and the offer's message becomes its link,
// without the button.
func TestTheOpenPullRequestButtonOnDiscord(t *testing.T) {
	t.Parallel()
	f := newFakeDiscord(t)
	h := discordHub(t, f, nil)
	ctx := context.Background()
	gh := ghfake.Start(t)
	repo := gh.NewRepo(t, "acme", "guild")
	gh.Grant("ghp_guild", "acme", "guild", ghfake.Write)
	p := h.NewForgeProject(repo, core.ForgeGitHub, core.PullRequestsOff, "ghp_guild")
	if err := h.Service.Admin.BindChat(ctx, &core.ChatBinding{Platform: core.PlatformDiscord, TeamID: guildID,
		AccountID: h.Account.ID, ProjectID: p.ID, Agent: "agent_1", Model: "test-model"}); err != nil {
		t.Fatal(err)
	}
	const root = "970000000000000301"
	f.dispatch("MESSAGE_CREATE", messageCreate(root, channel, "<@"+botID+"> write guild", true))
	posts := f.waitPosts(t, root, "the reply and the offer", func(p []post) bool { return len(p) >= 2 })
	offer := posts[1]
	ids := customIDs(offer.Components)
	if len(ids) != 1 || !strings.HasPrefix(ids[0], "wshub:pull_request:ws_") || !strings.Contains(offer.Content, "is pushed. Open a pull request from it?") {
		t.Fatalf("expected the offer with its button after the reply, got %+v", posts)
	}
	typ, _ := dispatchPress(t, f, buttonPress("970000000000000302", root, offer, ids[0]))
	if typ != 6 {
		t.Fatalf("expected the press deferred (6), got %d", typ)
	}
	url := gh.URL + "/acme/guild/pull/1"
	waitFor(t, "the offer edited to the link", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.originals["tok-970000000000000302"] == "Pull request #1 (open): "+url && f.origComponents["tok-970000000000000302"] == "[]"
	})
	if pulls := gh.Pulls("acme", "guild"); len(pulls) != 1 || pulls[0].Title != "write guild" {
		t.Fatalf("expected one pull request, got %+v", pulls)
	}
}
