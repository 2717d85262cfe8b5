package gitlab_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wshub/wshub/adapters/forge/gitlab"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/forgetest"
	fake "github.com/wshub/wshub/internal/testkit/forgetest/gitlab"
)

const (
	// path is in a subgroup: the API names it URL-encoded, acme%2Fplatform%2Fwidgets.
	path      = "acme/platform/widgets"
	developer = "glpat-developerToken0123456789"
	branch    = "wshub/ws_1"
)

func static(tok string) func(context.Context, *core.Project) (string, error) {
	return func(context.Context, *core.Project) (string, error) { return tok, nil }
}

// setup is a fake GitLab with acme/platform/widgets, a Developer's token, and the
// branch wshub/ws_1 pushed, one commit ahead of main.
func setup(t *testing.T) (*fake.Server, *gitlab.Forge, *core.Project) {
	t.Helper()
	s := fake.Start(t)
	url := s.NewRepo(t, path)
	s.Grant(developer, path, fake.Write)
	s.PushBranch(t, path, branch)
	return s, &gitlab.Forge{Token: static(developer)}, &core.Project{ID: "prj_1", Repository: url, Forge: core.ForgeGitLab}
}

func TestADraftMergeRequestOpensFromTheBranchAndReadsBack(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	got, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "Fix the widget", Body: "Turns:\n1. fix it", Draft: true})
	if err != nil {
		t.Fatalf("expected the draft opened, got %v", err)
	}
	want := core.PullRequest{Number: 1, URL: s.URL + "/acme/platform/widgets/-/merge_requests/1", State: core.PullRequestOpen, Draft: true, Head: branch, Base: "main"}
	if *got != want {
		t.Errorf("expected %+v, got %+v", want, *got)
	}
	held, ok := s.MergeRequest(path, 1)
	if !ok || held.SourceBranch != branch || held.TargetBranch != "main" || held.Title != "Draft: Fix the widget" ||
		held.Description != "Turns:\n1. fix it" || !held.Draft() || held.State != "opened" {
		t.Errorf("expected GitLab to hold a draft (\"Draft: \" title) from %s to main with its description, got %+v", branch, held)
	}
	read, err := f.GetPullRequest(ctx, p, 1)
	if err != nil || *read != want {
		t.Errorf("expected !1 read back as %+v, got %+v, %v", want, read, err)
	}
}

func TestAReadyMergeRequestIsNoDraft(t *testing.T) {
	s, f, p := setup(t)
	got, err := f.OpenPullRequest(t.Context(), p, core.PullRequestChange{Head: branch, Base: "main", Title: "Ready"})
	if err != nil {
		t.Fatal(err)
	}
	held, _ := s.MergeRequest(path, 1)
	if got.Draft || held.Draft() || held.Title != "Ready" {
		t.Errorf("expected a ready merge request titled as given, got %+v (GitLab holds %q)", got, held.Title)
	}
}

func TestFindingByHeadGivesTheNewestFromThatBranchInAnyState(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	s.PushBranch(t, path, "other")
	open := func(head string) {
		t.Helper()
		if _, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: head, Base: "main", Title: head}); err != nil {
			t.Fatal(err)
		}
	}
	open(branch)
	s.Close(path, 1)
	open(branch)
	s.Merge(path, 2)
	open("other")

	got, err := f.FindPullRequest(ctx, p, branch)
	if err != nil || got.Number != 2 || got.State != core.PullRequestMerged || got.Head != branch {
		t.Errorf("expected !2 (the newest from %s, merged), got %+v, %v", branch, got, err)
	}
	if _, err := f.FindPullRequest(ctx, p, "never-pushed"); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("expected ErrNoRows for a branch without a merge request, got %v", err)
	}
}

func TestASecondOpenFromTheSameBranchIsGitLabsConflictInWords(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	c := core.PullRequestChange{Head: branch, Base: "main", Title: "Once"}
	if _, err := f.OpenPullRequest(ctx, p, c); err != nil {
		t.Fatal(err)
	}
	_, err := f.OpenPullRequest(ctx, p, c)
	var r *core.ForgeRefusal
	// GitLab gives the message as an array; it comes out as its sentence.
	if !errors.As(err, &r) || r.Status != 409 || r.Reason != "Another open merge request already exists for this source branch: !1" {
		t.Fatalf("expected GitLab's 409 in its words, got %#v", err)
	}
	if n := len(s.MergeRequests(path)); n != 1 {
		t.Errorf("expected one merge request, got %d", n)
	}
}

func TestABranchGitLabCannotOpenFromIsRefusedInWords(t *testing.T) {
	_, f, p := setup(t)
	for _, c := range []struct{ head, want string }{
		{"main", "You can't use same project/branch for source and target"},
		{"never-pushed", `Source branch "never-pushed" does not exist`},
	} {
		_, err := f.OpenPullRequest(t.Context(), p, core.PullRequestChange{Head: c.head, Base: "main", Title: "t"})
		var r *core.ForgeRefusal
		if !errors.As(err, &r) || r.Status != 422 || r.Reason != c.want {
			t.Errorf("from %s: expected 422 %q, got %#v", c.head, c.want, err)
		}
	}
}

func TestAnUpdateSetsTitleAndDescriptionAndKeepsTheDraft(t *testing.T) {
	for _, draft := range []bool{true, false} {
		s, f, p := setup(t)
		ctx := t.Context()
		if _, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "First", Body: "one turn", Draft: draft}); err != nil {
			t.Fatal(err)
		}
		got, err := f.UpdatePullRequest(ctx, p, 1, "First, renamed", "two turns")
		if err != nil || got.Number != 1 || got.Draft != draft || got.State != core.PullRequestOpen {
			t.Fatalf("draft %v: expected !1 updated, still open with draft %v, got %+v, %v", draft, draft, got, err)
		}
		want := "First, renamed"
		if draft {
			want = "Draft: First, renamed"
		}
		held, _ := s.MergeRequest(path, 1)
		if held.Title != want || held.Description != "two turns" || held.Draft() != draft {
			t.Errorf("draft %v: expected GitLab to hold %q with the new description, got %+v", draft, want, held)
		}
	}
}

func TestMergedClosedAndLockedAreMappedFromGitLabsStates(t *testing.T) {
	for _, c := range []struct {
		name  string
		act   func(s *fake.Server)
		state string
	}{
		{"opened", func(*fake.Server) {}, core.PullRequestOpen},
		{"merged", func(s *fake.Server) { s.Merge(path, 1) }, core.PullRequestMerged},
		{"closed", func(s *fake.Server) { s.Close(path, 1) }, core.PullRequestClosed},
		{"locked", func(s *fake.Server) { s.Lock(path, 1) }, core.PullRequestClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, f, p := setup(t)
			ctx := t.Context()
			if _, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "t"}); err != nil {
				t.Fatal(err)
			}
			c.act(s)
			got, err := f.GetPullRequest(ctx, p, 1)
			if err != nil || got.State != c.state {
				t.Errorf("get: expected %s, got %+v, %v", c.state, got, err)
			}
			found, err := f.FindPullRequest(ctx, p, branch)
			if err != nil || found.State != c.state {
				t.Errorf("find: expected %s, got %+v, %v", c.state, found, err)
			}
		})
	}
}

func TestGitLabsRefusalsAreWordsWithoutTheToken(t *testing.T) {
	const (
		wrong    = "glpat-wrongToken0123456789abc"
		reporter = "glpat-reporterToken0123456789"
		stranger = "glpat-strangerToken0123456789"
	)
	for _, c := range []struct {
		name, token, repo string
		archive           bool
		status            int
		want              string
	}{
		{"a wrong token", wrong, path, false, 401, "401 Unauthorized (the token is wrong, expired or revoked)"},
		{"a Reporter's token", reporter, path, false, 403,
			"403 Forbidden (the token may not do this in acme/platform/widgets: merge requests need the Developer role, and an archived project takes none)"},
		{"a token that cannot see the project", stranger, path, false, 404,
			"404 Not Found (acme/platform/widgets, or the merge request, does not exist, or the token cannot see it)"},
		{"a project that does not exist", developer, "acme/platform/gadgets", false, 404,
			"404 Not Found (acme/platform/gadgets, or the merge request, does not exist, or the token cannot see it)"},
		{"an archived project", developer, path, true, 403,
			"403 Forbidden (the token may not do this in acme/platform/widgets: merge requests need the Developer role, and an archived project takes none)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, p := setup(t)
			s.Grant(reporter, path, fake.Read)
			s.NewRepo(t, "elsewhere/thing")
			s.Grant(stranger, "elsewhere/thing", fake.Write)
			if c.archive {
				s.Archive(path)
			}
			p.Repository = s.URL + "/" + c.repo + ".git"
			f := &gitlab.Forge{Token: static(c.token)}
			_, err := f.OpenPullRequest(t.Context(), p, core.PullRequestChange{Head: branch, Base: "main", Title: "t"})
			var r *core.ForgeRefusal
			if !errors.As(err, &r) || r.Status != c.status || r.Reason != c.want {
				t.Fatalf("expected %d %q, got %#v", c.status, c.want, err)
			}
			if strings.Contains(err.Error(), c.token) {
				t.Errorf("the refusal holds the token: %v", err)
			}
		})
	}
}

func TestPlainHTTPToAnotherHostIsRefusedBeforeATokenIsTaken(t *testing.T) {
	var asked atomic.Int32
	f := &gitlab.Forge{Token: func(context.Context, *core.Project) (string, error) { asked.Add(1); return developer, nil }}
	_, err := f.FindPullRequest(t.Context(), &core.Project{Repository: "http://gitlab.example.com/acme/widgets.git"}, branch)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 0 || !strings.Contains(r.Reason, "plain http") {
		t.Fatalf("expected a refusal of plain http, got %#v", err)
	}
	if asked.Load() != 0 {
		t.Errorf("expected no token taken for a URL that is refused")
	}
}

func TestAGitLabThatCannotBeReachedIsStatusZeroInWords(t *testing.T) {
	gone := httptest.NewServer(nil)
	gone.Close()
	f := &gitlab.Forge{Token: static(developer)}
	_, err := f.GetPullRequest(t.Context(), &core.Project{Repository: gone.URL + "/acme/widgets.git"}, 1)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 0 || !strings.HasPrefix(r.Reason, "could not reach GitLab at "+gone.URL+": ") {
		t.Fatalf("expected a refusal saying GitLab could not be reached, got %#v", err)
	}
}

func TestTheForgeCallsOnlyTheMergeRequestRoutesWithTheEncodedPath(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	if _, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "t"}); err != nil {
		t.Fatal(err)
	}
	_, _ = f.FindPullRequest(ctx, p, branch)
	_, _ = f.UpdatePullRequest(ctx, p, 1, "t", "b")
	_, _ = f.GetPullRequest(ctx, p, 1)
	var routes []string
	for _, r := range s.Requests() {
		route, _, _ := strings.Cut(r, "?")
		routes = append(routes, route)
	}
	const mrs = "/api/v4/projects/acme%2Fplatform%2Fwidgets/merge_requests"
	want := []string{"POST " + mrs, "GET " + mrs, "GET " + mrs + "/1", "PUT " + mrs + "/1", "GET " + mrs + "/1"}
	if !slices.Equal(routes, want) {
		t.Errorf("expected %q, got %q", want, routes)
	}
}

func TestATokenPushesOverHTTPSAsGitDoes(t *testing.T) {
	s, _, p := setup(t)
	if out, err := forgetest.Push(t, p.Repository, "oauth2", developer, "wshub/pushed"); err != nil {
		t.Fatalf("expected the push with the token to succeed, got %v: %s", err, out)
	}
	if out, err := exec.Command("git", "--git-dir", s.BareRepo(path), "rev-parse", "--verify", "refs/heads/wshub/pushed").CombinedOutput(); err != nil {
		t.Fatalf("expected the branch on GitLab, got %v: %s", err, out)
	}
	s.Protect(t, path, "main")
	if out, err := forgetest.Push(t, p.Repository, "oauth2", developer, "main"); err == nil || !strings.Contains(out, "You are not allowed to push code to protected branches on this project.") {
		t.Errorf("expected a push to the protected main refused in GitLab's words, got %v: %s", err, out)
	}
}
