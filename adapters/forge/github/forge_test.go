package github_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wshub/wshub/adapters/forge/github"
	"github.com/wshub/wshub/core"
	fake "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

const (
	owner  = "acme"
	name   = "widgets"
	writer = "ghp_writerToken0123456789abcdefghijkl"
	branch = "wshub/ws_1"
)

// static is a Token that always gives tok.
func static(tok string) func(context.Context, *core.Project) (string, error) {
	return func(context.Context, *core.Project) (string, error) { return tok, nil }
}

// setup is a fake GitHub with acme/widgets, a token that may write to it, and the
// branch wshub/ws_1 pushed, one commit ahead of main.
func setup(t *testing.T) (*fake.Server, *github.Forge, *core.Project) {
	t.Helper()
	s := fake.Start(t)
	url := s.NewRepo(t, owner, name)
	s.Grant(writer, owner, name, fake.Write)
	s.PushBranch(t, owner, name, branch)
	return s, &github.Forge{Token: static(writer)}, &core.Project{ID: "prj_1", Repository: url, Forge: core.ForgeGitHub}
}

func TestADraftPullRequestOpensFromTheBranchAndReadsBack(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	got, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "Fix the widget", Body: "Turns:\n1. fix it", Draft: true})
	if err != nil {
		t.Fatalf("expected the draft opened, got %v", err)
	}
	want := core.PullRequest{Number: 1, URL: s.URL + "/acme/widgets/pull/1", State: core.PullRequestOpen, Draft: true, Head: branch, Base: "main"}
	if *got != want {
		t.Errorf("expected %+v, got %+v", want, *got)
	}
	held, ok := s.Pull(owner, name, 1)
	if !ok || held.Head != branch || held.Base != "main" || held.Title != "Fix the widget" || held.Body != "Turns:\n1. fix it" || !held.Draft || held.State != "open" {
		t.Errorf("expected GitHub to hold the draft from %s to main with its title and body, got %+v", branch, held)
	}
	read, err := f.GetPullRequest(ctx, p, 1)
	if err != nil || *read != want {
		t.Errorf("expected #1 read back as %+v, got %+v, %v", want, read, err)
	}
}

func TestAReadyPullRequestIsNoDraft(t *testing.T) {
	s, f, p := setup(t)
	got, err := f.OpenPullRequest(t.Context(), p, core.PullRequestChange{Head: branch, Base: "main", Title: "Ready"})
	if err != nil {
		t.Fatal(err)
	}
	held, _ := s.Pull(owner, name, 1)
	if got.Draft || held.Draft {
		t.Errorf("expected a ready pull request, got %+v (GitHub holds draft=%v)", got, held.Draft)
	}
	if held.Body != "" {
		t.Errorf("expected no body, got %q", held.Body)
	}
}

func TestFindingByHeadGivesTheNewestFromThatBranchInAnyState(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	s.PushBranch(t, owner, name, "other")
	open := func(head string) *core.PullRequest {
		t.Helper()
		pr, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: head, Base: "main", Title: head})
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	open(branch)
	s.Close(owner, name, 1)
	open(branch)
	s.Close(owner, name, 2)
	open("other") // newer, from another branch: GitHub's head filter leaves it out

	got, err := f.FindPullRequest(ctx, p, branch)
	if err != nil || got.Number != 2 || got.State != core.PullRequestClosed || got.Head != branch {
		t.Errorf("expected #2 (the newest from %s, closed), got %+v, %v", branch, got, err)
	}
	if _, err := f.FindPullRequest(ctx, p, "never-pushed"); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("expected ErrNoRows for a branch without a pull request, got %v", err)
	}
	for _, r := range s.Requests() {
		if strings.HasPrefix(r, "GET /api/v3/repos/acme/widgets/pulls?") && !strings.Contains(r, "head=acme%3A") {
			t.Errorf("expected the list filtered by head=owner:branch, got %s", r)
		}
	}
}

func TestASecondOpenFromTheSameHeadIsGitHubsRefusalInItsWords(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	c := core.PullRequestChange{Head: branch, Base: "main", Title: "Once"}
	if _, err := f.OpenPullRequest(ctx, p, c); err != nil {
		t.Fatal(err)
	}
	_, err := f.OpenPullRequest(ctx, p, c)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 422 || r.Reason != "Validation Failed: A pull request already exists for acme:wshub/ws_1." {
		t.Fatalf("expected GitHub's 422 with its words, got %#v", err)
	}
	posts := 0
	for _, req := range s.Requests() {
		if strings.HasPrefix(req, "POST ") {
			posts++
		}
	}
	if posts != 2 || len(s.Pulls(owner, name)) != 1 {
		t.Errorf("expected two creates asked (none retried) and one pull request, got %d and %d", posts, len(s.Pulls(owner, name)))
	}
}

func TestABranchGitHubCannotOpenFromIsRefusedInWords(t *testing.T) {
	s, f, p := setup(t)
	// A branch with nothing main has not.
	if out, err := exec.Command("git", "--git-dir", s.BareRepo(owner, name), "branch", "level", "main").CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v: %s", err, out)
	}
	for _, c := range []struct{ head, want string }{
		{"level", "Validation Failed: No commits between main and level"},
		{"never-pushed", "Validation Failed: head is not valid"},
	} {
		_, err := f.OpenPullRequest(t.Context(), p, core.PullRequestChange{Head: c.head, Base: "main", Title: "t"})
		var r *core.ForgeRefusal
		if !errors.As(err, &r) || r.Status != 422 || r.Reason != c.want {
			t.Errorf("from %s: expected 422 %q, got %#v", c.head, c.want, err)
		}
	}
}

func TestAnUpdateSetsTitleAndBodyAndKeepsTheDraft(t *testing.T) {
	s, f, p := setup(t)
	ctx := t.Context()
	if _, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "First", Body: "one turn", Draft: true}); err != nil {
		t.Fatal(err)
	}
	got, err := f.UpdatePullRequest(ctx, p, 1, "First, renamed", "two turns")
	if err != nil || got.Number != 1 || !got.Draft || got.State != core.PullRequestOpen {
		t.Fatalf("expected #1 updated, still an open draft, got %+v, %v", got, err)
	}
	held, _ := s.Pull(owner, name, 1)
	if held.Title != "First, renamed" || held.Body != "two turns" || !held.Draft {
		t.Errorf("expected GitHub to hold the new title and body on the draft, got %+v", held)
	}
}

func TestMergedAndClosedAreMappedFromGitHubsTwoStates(t *testing.T) {
	for _, c := range []struct {
		name  string
		act   func(s *fake.Server)
		state string
	}{
		{"open", func(*fake.Server) {}, core.PullRequestOpen},
		{"merged", func(s *fake.Server) { s.Merge(owner, name, 1) }, core.PullRequestMerged},
		{"closed", func(s *fake.Server) { s.Close(owner, name, 1) }, core.PullRequestClosed},
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
			// A list leaves merged out: merged_at says it.
			found, err := f.FindPullRequest(ctx, p, branch)
			if err != nil || found.State != c.state {
				t.Errorf("find: expected %s, got %+v, %v", c.state, found, err)
			}
		})
	}
}

func TestGitHubsRefusalsAreWordsWithoutTheToken(t *testing.T) {
	const (
		wrong    = "ghp_wrongToken0123456789abcdefghijklmn"
		reader   = "ghp_readerToken0123456789abcdefghijkl"
		stranger = "ghp_strangerToken0123456789abcdefghij"
	)
	for _, c := range []struct {
		name, token, repo string
		archive           bool
		status            int
		want              string
	}{
		{"a wrong token", wrong, name, false, 401, "Bad credentials"},
		{"a token that may only read", reader, name, false, 403, "Resource not accessible by personal access token"},
		{"a token that cannot see the repository", stranger, name, false, 404, "Not Found (acme/widgets does not exist, or the token cannot see it)"},
		{"a repository that does not exist", writer, "gadgets", false, 404, "Not Found (acme/gadgets does not exist, or the token cannot see it)"},
		{"an archived repository", writer, name, true, 403, "Repository was archived so is read-only."},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, p := setup(t)
			s.Grant(reader, owner, name, fake.Read)
			s.NewRepo(t, "elsewhere", "thing")
			s.Grant(stranger, "elsewhere", "thing", fake.Write)
			if c.archive {
				s.Archive(owner, name)
			}
			p.Repository = s.URL + "/acme/" + c.repo + ".git"
			f := &github.Forge{Token: static(c.token)}
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
	f := &github.Forge{Token: func(context.Context, *core.Project) (string, error) { asked.Add(1); return writer, nil }}
	p := &core.Project{Repository: "http://github.example.com/acme/widgets.git"}
	_, err := f.FindPullRequest(t.Context(), p, branch)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 0 || !strings.Contains(r.Reason, "plain http") {
		t.Fatalf("expected a refusal of plain http, got %#v", err)
	}
	if asked.Load() != 0 {
		t.Errorf("expected no token taken for a URL that is refused")
	}
}

func TestNoTokenIsRefusedBeforeGitHubIsAsked(t *testing.T) {
	s, _, p := setup(t)
	f := &github.Forge{Token: static("")}
	_, err := f.FindPullRequest(t.Context(), p, branch)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 0 || !strings.Contains(r.Reason, "no token for acme/widgets") {
		t.Fatalf("expected a refusal for want of a token, got %#v", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("expected GitHub not asked, got %d requests", n)
	}
}

func TestAGitHubThatCannotBeReachedIsStatusZeroInWords(t *testing.T) {
	gone := httptest.NewServer(nil)
	gone.Close()
	f := &github.Forge{Token: static(writer)}
	_, err := f.GetPullRequest(t.Context(), &core.Project{Repository: gone.URL + "/acme/widgets.git"}, 1)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 0 || !strings.HasPrefix(r.Reason, "could not reach GitHub at "+gone.URL+"/api/v3: ") {
		t.Fatalf("expected a refusal saying GitHub could not be reached, got %#v", err)
	}
	if strings.Contains(err.Error(), writer) {
		t.Errorf("the refusal holds the token: %v", err)
	}
}

func TestTheForgeCallsOnlyThePullRequestRoutes(t *testing.T) {
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
	want := []string{"POST /api/v3/repos/acme/widgets/pulls", "GET /api/v3/repos/acme/widgets/pulls",
		"PATCH /api/v3/repos/acme/widgets/pulls/1", "GET /api/v3/repos/acme/widgets/pulls/1"}
	if !slices.Equal(routes, want) {
		t.Errorf("expected one call per use, %q, got %q", want, routes)
	}
}
