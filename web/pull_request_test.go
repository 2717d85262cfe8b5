package web_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// A member opens the branch's pull request from the workspace's page (a project
// whose pull requests are off): the button, then the link to it in the work section.
func TestAMemberOpensThePullRequestFromTheWorkspacesPage(t *testing.T) {
	s := workingSite(t)
	gh := ghfake.Start(t)
	repo := gh.NewRepo(t, "acme", "web")
	gh.Grant("ghp_app", "acme", "web", ghfake.Write)
	p := s.hub.NewForgeProject(repo, core.ForgeGitHub, core.PullRequestsOff, "ghp_app")
	s.person("ada-1", "ada@example.com", "Ada Lovelace", core.RoleMember)
	s.signIn("ada-1")
	id := s.start("write hello", "project", p.ID)
	s.waitPage("/app/workspaces/"+id, "Pushed at")
	page := s.waitPage("/app/workspaces/"+id, "Open pull request")
	if strings.Contains(page, "<<<<<<<") || strings.Count(page, "See the changes") != 1 {
		t.Fatalf("the page's facts are garbled:\n%s", page)
	}
	code, path, body := s.post("/app/workspaces/"+id+"/pull-request", url.Values{"csrf": {csrfOf(t, page)}})
	if code != 200 || path != "/app/workspaces/"+id {
		t.Fatalf("expected the page again, got %d at %s:\n%s", code, path, body)
	}
	link := `<a href="` + gh.URL + `/acme/web/pull/1" rel="noopener noreferrer">#1</a> (open)`
	if !strings.Contains(body, link) || strings.Contains(body, "Open pull request</button>") {
		t.Fatalf("expected the pull request linked instead of the button:\n%s", body)
	}
	if pulls := gh.Pulls("acme", "web"); len(pulls) != 1 || pulls[0].Title != "write hello" {
		t.Fatalf("expected one pull request, got %+v", pulls)
	}
	// Without the CSRF token: refused, nothing opened.
	if code, _, _ := s.post("/app/workspaces/"+id+"/pull-request", url.Values{}); code != 403 {
		t.Errorf("expected 403 without the CSRF token, got %d", code)
	}
}
