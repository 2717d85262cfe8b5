package gitea_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "code.gitea.io/sdk/gitea"
	"github.com/wshub/wshub/adapters/forge/gitea"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/enginetest"
	"github.com/wshub/wshub/internal/testkit/giteatest"
)

// forgeAs is the adapter calling Gitea with token.
func forgeAs(token string) *gitea.Forge {
	return &gitea.Forge{Token: func(context.Context, *core.Project) (string, error) { return token, nil }}
}

func project(clone string) *core.Project {
	return &core.Project{ID: "prj_gitea", Repository: clone, Forge: core.ForgeGitea, DefaultBranch: "main"}
}

// push pushes a new branch of the repository at clone as the administrator.
func push(t *testing.T, s *giteatest.Server, clone, branch string) {
	t.Helper()
	if out, err := s.Push(t, clone, s.AdminUser, s.AdminToken, branch); err != nil {
		t.Fatalf("push %s: %v\n%s", branch, err, out)
	}
}

// refused asserts err is a *core.ForgeRefusal with status and every one of words in
// its reason, and no token.
func refused(t *testing.T, what string, err error, status int, tokens []string, words ...string) {
	t.Helper()
	var r *core.ForgeRefusal
	if !errors.As(err, &r) {
		t.Fatalf("%s: want a *core.ForgeRefusal (HTTP %d), got %T %v", what, status, err, err)
	}
	t.Logf("%s: %v", what, r)
	if r.Status != status {
		t.Errorf("%s: want HTTP %d, got %d: %s", what, status, r.Status, r.Reason)
	}
	for _, w := range words {
		if !strings.Contains(r.Reason, w) {
			t.Errorf("%s: want the reason to say %q, got %q", what, w, r.Reason)
		}
	}
	if strings.Contains(r.Reason, "\n") {
		t.Errorf("%s: want one line, got %q", what, r.Reason)
	}
	for _, tok := range tokens {
		if strings.Contains(r.Error(), tok) {
			t.Errorf("%s: the refusal carries the token: %q", what, r.Error())
		}
	}
}

// One Gitea serves these cases, each on its own repository: it takes two seconds to
// start, and the machine running the tests is small.
func TestForgeOnARealGitea(t *testing.T) {
	s := giteatest.Start(t)
	ctx := context.Background()
	admin := forgeAs(s.AdminToken)

	t.Run("OpenedPullRequestReadsBackInGiteaAndIsFoundByItsHead", func(t *testing.T) {
		clone := s.NewRepo(t, "opened")
		push(t, s, clone, "wshub/ws-1")
		p := project(clone)
		opened, err := admin.OpenPullRequest(ctx, p, core.PullRequestChange{
			Head: "wshub/ws-1", Base: "main", Title: "Fix the flaky test", Body: "What the agent did.",
		})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		if opened.Number == 0 || opened.State != core.PullRequestOpen || opened.Draft ||
			opened.Head != "wshub/ws-1" || opened.Base != "main" ||
			opened.URL != s.URL+"/"+s.AdminUser+"/opened/pulls/"+strconv.FormatInt(opened.Number, 10) {
			t.Fatalf("open: want an open, ready pull request wshub/ws-1 -> main at its page, got %+v", opened)
		}
		pr, _, err := s.Client.GetPullRequest(s.AdminUser, "opened", opened.Number)
		if err != nil {
			t.Fatalf("read back through Gitea's API: %v", err)
		}
		if pr.Head.Ref != "wshub/ws-1" || pr.Base.Ref != "main" || pr.Title != "Fix the flaky test" ||
			pr.Body != "What the agent did." || pr.State != sdk.StateOpen || pr.Draft {
			t.Fatalf("in Gitea: want wshub/ws-1 -> main titled and described as opened, open, not a draft; got head %s base %s title %q body %q state %s draft %v",
				pr.Head.Ref, pr.Base.Ref, pr.Title, pr.Body, pr.State, pr.Draft)
		}

		found, err := admin.FindPullRequest(ctx, p, "wshub/ws-1")
		if err != nil || found.Number != opened.Number {
			t.Fatalf("find by head: want #%d, got %+v (%v)", opened.Number, found, err)
		}
		if _, err := admin.FindPullRequest(ctx, p, "wshub/ws-2"); !errors.Is(err, core.ErrNoRows) {
			t.Fatalf("find a head with no pull request: want ErrNoRows, got %v", err)
		}

		_, err = admin.OpenPullRequest(ctx, p, core.PullRequestChange{Head: "wshub/ws-1", Base: "main", Title: "Again"})
		refused(t, "open a second one from the same head", err, http.StatusConflict, []string{s.AdminToken}, "already exists")

		updated, err := admin.UpdatePullRequest(ctx, p, opened.Number, "Fix the flaky test", "What the agent did, then more.")
		if err != nil || updated.Number != opened.Number {
			t.Fatalf("update: want #%d, got %+v (%v)", opened.Number, updated, err)
		}
		if pr, _, err := s.Client.GetPullRequest(s.AdminUser, "opened", opened.Number); err != nil ||
			pr.Body != "What the agent did, then more." || pr.Title != "Fix the flaky test" {
			t.Fatalf("in Gitea after the update: want the new body, got %+v (%v)", pr, err)
		}

		s.Merge(t, "opened", opened.Number)
		got, err := admin.GetPullRequest(ctx, p, opened.Number)
		if err != nil || got.State != core.PullRequestMerged {
			t.Fatalf("get after the merge: want merged, got %+v (%v)", got, err)
		}
		if found, err := admin.FindPullRequest(ctx, p, "wshub/ws-1"); err != nil || found.State != core.PullRequestMerged {
			t.Fatalf("find after the merge: want it, merged, got %+v (%v)", found, err)
		}
	})

	t.Run("AnIssuesNewestCommentsAreReadFromItsLastPages", func(t *testing.T) {
		clone := s.NewRepo(t, "talk")
		p := project(clone)
		issue, _, err := s.Client.CreateIssue(s.AdminUser, "talk", sdk.CreateIssueOption{Title: "Talk"})
		if err != nil {
			t.Fatal(err)
		}
		// Gitea lists comments oldest first, fifty a page: of 51, the last page holds
		// one, and the page before it is read too.
		for i := 1; i <= 51; i++ {
			if _, _, err := s.Client.CreateIssueComment(s.AdminUser, "talk", issue.Index, sdk.CreateIssueCommentOption{Body: fmt.Sprint("comment ", i)}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := admin.RecentIssueComments(ctx, p, issue.Index, 3)
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, c := range got {
			bodies = append(bodies, c.Login+": "+c.Body)
		}
		want := []string{s.AdminUser + ": comment 49", s.AdminUser + ": comment 50", s.AdminUser + ": comment 51"}
		if !slices.Equal(bodies, want) {
			t.Errorf("expected %q, got %q", want, bodies)
		}
	})

	t.Run("DraftIsOpenedWithGiteasWorkInProgressPrefixAndStaysOne", func(t *testing.T) {
		clone := s.NewRepo(t, "draft")
		push(t, s, clone, "draft-1")
		p := project(clone)
		opened, err := admin.OpenPullRequest(ctx, p, core.PullRequestChange{
			Head: "draft-1", Base: "main", Title: "Try a thing", Body: "b", Draft: true,
		})
		if err != nil || !opened.Draft {
			t.Fatalf("open a draft: want a draft, got %+v (%v)", opened, err)
		}
		pr, _, err := s.Client.GetPullRequest(s.AdminUser, "draft", opened.Number)
		if err != nil || pr.Title != "WIP: Try a thing" || !pr.Draft {
			t.Fatalf("in Gitea: want title %q, a draft, got %+v (%v)", "WIP: Try a thing", pr, err)
		}
		updated, err := admin.UpdatePullRequest(ctx, p, opened.Number, "Try a better thing", "b2")
		if err != nil || !updated.Draft {
			t.Fatalf("update a draft: want it still a draft, got %+v (%v)", updated, err)
		}
		if pr, _, err := s.Client.GetPullRequest(s.AdminUser, "draft", opened.Number); err != nil || pr.Title != "WIP: Try a better thing" {
			t.Fatalf("in Gitea after the update: want title %q, got %+v (%v)", "WIP: Try a better thing", pr, err)
		}
		closed := sdk.StateClosed
		if _, _, err := s.Client.EditPullRequest(s.AdminUser, "draft", opened.Number, sdk.EditPullRequestOption{State: &closed}); err != nil {
			t.Fatalf("close through Gitea: %v", err)
		}
		if got, err := admin.GetPullRequest(ctx, p, opened.Number); err != nil || got.State != core.PullRequestClosed {
			t.Fatalf("get after closing: want closed, got %+v (%v)", got, err)
		}
	})

	t.Run("FindIgnoresAForksBranchOfTheSameName", func(t *testing.T) {
		clone := s.NewRepo(t, "forked")
		user, token := s.NewUser(t)
		userClient, err := sdk.NewClient(s.URL, sdk.SetToken(token), sdk.SetGiteaVersion(""))
		if err != nil {
			t.Fatal(err)
		}
		fork, _, err := userClient.CreateFork(s.AdminUser, "forked", sdk.CreateForkOption{})
		if err != nil {
			t.Fatalf("fork as %s: %v", user, err)
		}
		if out, err := s.Push(t, fork.CloneURL, user, token, "feature"); err != nil {
			t.Fatalf("push to the fork: %v\n%s", err, out)
		}
		if _, _, err := userClient.CreatePullRequest(s.AdminUser, "forked", sdk.CreatePullRequestOption{
			Head: user + ":feature", Base: "main", Title: "From a fork",
		}); err != nil {
			t.Fatalf("open from the fork: %v", err)
		}
		p := project(clone)
		if got, err := admin.FindPullRequest(ctx, p, "feature"); !errors.Is(err, core.ErrNoRows) {
			t.Fatalf("find feature with only a fork's feature open: want ErrNoRows, got %+v (%v)", got, err)
		}
		push(t, s, clone, "feature")
		own, err := admin.OpenPullRequest(ctx, p, core.PullRequestChange{Head: "feature", Base: "main", Title: "Own"})
		if err != nil {
			t.Fatalf("open from the repository's own feature: %v", err)
		}
		if got, err := admin.FindPullRequest(ctx, p, "feature"); err != nil || got.Number != own.Number {
			t.Fatalf("find feature: want the repository's own #%d, got %+v (%v)", own.Number, got, err)
		}
	})

	t.Run("UserWithoutWriteAccessIsRefusedInWords", func(t *testing.T) {
		clone := s.NewRepo(t, "theirs")
		push(t, s, clone, "feature")
		_, token := s.NewUser(t)
		p := project(clone)
		_, err := forgeAs(token).OpenPullRequest(ctx, p, core.PullRequestChange{Head: "feature", Base: "main", Title: "Mine"})
		refused(t, "open without write access", err, http.StatusForbidden, []string{token},
			"Gitea refused to open a pull request from feature into main of "+s.AdminUser+"/theirs", "collaborator", "write access")

		opened, err := admin.OpenPullRequest(ctx, p, core.PullRequestChange{Head: "feature", Base: "main", Title: "Admin's"})
		if err != nil {
			t.Fatalf("open as the administrator: %v", err)
		}
		_, err = forgeAs(token).UpdatePullRequest(ctx, p, opened.Number, "Taken over", "")
		refused(t, "update without write access", err, http.StatusForbidden, []string{token}, "forbidden", "write access")

		private := true
		if _, _, err := s.Client.EditRepo(s.AdminUser, "theirs", sdk.EditRepoOption{Private: &private}); err != nil {
			t.Fatalf("make private: %v", err)
		}
		_, err = forgeAs(token).GetPullRequest(ctx, p, opened.Number)
		refused(t, "read a private repository's", err, http.StatusNotFound, []string{token}, "not found", "cannot see it")

		_, err = forgeAs("not-a-token").GetPullRequest(ctx, p, opened.Number)
		refused(t, "read with a token Gitea does not know", err, http.StatusUnauthorized, []string{"not-a-token"}, "token")
	})

	t.Run("ArchivedRepositoryIsRefusedInWords", func(t *testing.T) {
		clone := s.NewRepo(t, "archived")
		push(t, s, clone, "feature")
		s.Archive(t, "archived")
		_, err := admin.OpenPullRequest(ctx, project(clone), core.PullRequestChange{Head: "feature", Base: "main", Title: "Late"})
		refused(t, "open on an archived repository", err, http.StatusLocked, []string{s.AdminToken}, "archived", "read-only")
		out, err := s.Push(t, clone, s.AdminUser, s.AdminToken, "later")
		if err == nil || !strings.Contains(out, "archived") {
			t.Fatalf("push to an archived repository: want git to say it is archived, got %v\n%s", err, out)
		}
	})

	t.Run("ProtectedBaseRefusesPushesButTakesPullRequests", func(t *testing.T) {
		clone := s.NewRepo(t, "protected")
		s.ProtectBranch(t, "protected", "main")
		out, err := s.Push(t, clone, s.AdminUser, s.AdminToken, "main")
		if err == nil || !strings.Contains(out, "Not allowed to push to protected branch main") {
			t.Fatalf("push to the protected main: want git to say it is protected, got %v\n%s", err, out)
		}
		push(t, s, clone, "feature")
		opened, err := admin.OpenPullRequest(ctx, project(clone), core.PullRequestChange{Head: "feature", Base: "main", Title: "Through review"})
		if err != nil || opened.State != core.PullRequestOpen {
			t.Fatalf("open into the protected main: want it open, got %+v (%v)", opened, err)
		}
	})
}

func TestUnreachableGiteaIsARefusalInWords(t *testing.T) {
	// A port nobody listens on (free a moment ago).
	clone := "http://127.0.0.1:" + enginetest.FreePort(t) + "/org/repo.git"
	_, err := forgeAs("tok-unreachable").GetPullRequest(context.Background(), project(clone), 1)
	refused(t, "read from a Gitea that is not there", err, 0, []string{"tok-unreachable"},
		"could not be reached to read pull request #1 of org/repo", "connection refused")
}

func TestCancelledCallIsTheContextsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clone := "http://127.0.0.1:" + enginetest.FreePort(t) + "/org/repo.git"
	_, err := forgeAs("tok").GetPullRequest(ctx, project(clone), 1)
	var r *core.ForgeRefusal
	if !errors.Is(err, context.Canceled) || errors.As(err, &r) {
		t.Fatalf("a call the hub gave up on: want context.Canceled, not a refusal, got %T %v", err, err)
	}
}

func TestNoTokenIsARefusalBeforeAnyCall(t *testing.T) {
	// Nothing listens there: a call would be refused as unreachable instead.
	clone := "http://127.0.0.1:" + enginetest.FreePort(t) + "/org/repo.git"
	_, err := forgeAs("").OpenPullRequest(context.Background(), project(clone), core.PullRequestChange{Head: "a", Base: "main", Title: "t"})
	refused(t, "open without a token", err, 0, nil, "there is no token for org/repo", "give the project a credential")
}

func TestTokenLookupFailureIsTheHubsError(t *testing.T) {
	lost := errors.New("credential store down")
	f := &gitea.Forge{Token: func(context.Context, *core.Project) (string, error) { return "", lost }}
	_, err := f.GetPullRequest(context.Background(), project("https://gitea.example.org/org/repo.git"), 1)
	if !errors.Is(err, lost) {
		t.Fatalf("want the token lookup's error, got %v", err)
	}
}
