package giteatest

import (
	"net/http"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/wshub/wshub/internal/testkit/enginetest"
)

// NewRepo makes a public repository of AdminUser named name, with a first commit (a
// README) on main, and returns its clone URL (http://127.0.0.1:<port>/<owner>/<name>.git).
func (s *Server) NewRepo(t testing.TB, name string) string {
	t.Helper()
	r, _, err := s.Client.CreateRepo(gitea.CreateRepoOption{
		Name: name, AutoInit: true, Readme: "Default", DefaultBranch: "main",
	})
	if err != nil {
		t.Fatalf("giteatest: create repository %s: %v", name, err)
	}
	return r.CloneURL
}

// NewUser makes a user who is no collaborator of any repository, and returns its name
// and an access token with every scope: what it may do is only what Gitea lets any
// signed-in user do (read public repositories, open its own).
func (s *Server) NewUser(t testing.TB) (name, token string) {
	t.Helper()
	name = "user-" + enginetest.RandomHex(t, 4)
	password := enginetest.RandomHex(t, 12)
	no := false
	if _, _, err := s.Client.AdminCreateUser(gitea.CreateUserOption{
		Username: name, Email: name + "@example.org", Password: password, MustChangePassword: &no,
	}); err != nil {
		t.Fatalf("giteatest: create user %s: %v", name, err)
	}
	// A token is made with the user's own password (Gitea takes no token for that).
	c, err := gitea.NewClient(s.URL, gitea.SetBasicAuth(name, password), gitea.SetGiteaVersion(""))
	if err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	tok, _, err := c.CreateAccessToken(gitea.CreateAccessTokenOption{
		Name: "giteatest", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll},
	})
	if err != nil {
		t.Fatalf("giteatest: create a token for %s: %v", name, err)
	}
	return name, tok.Token
}

// ProtectBranch protects the branches of AdminUser's repository repo that match
// pattern: nobody may push to them (changes come through pull requests).
func (s *Server) ProtectBranch(t testing.TB, repo, pattern string) {
	t.Helper()
	if _, _, err := s.Client.CreateBranchProtection(s.AdminUser, repo, gitea.CreateBranchProtectionOption{
		RuleName: pattern, EnablePush: false,
	}); err != nil {
		t.Fatalf("giteatest: protect %s of %s: %v", pattern, repo, err)
	}
}

// Archive archives AdminUser's repository repo: readable, and nothing more.
func (s *Server) Archive(t testing.TB, repo string) {
	t.Helper()
	yes := true
	if _, _, err := s.Client.EditRepo(s.AdminUser, repo, gitea.EditRepoOption{Archived: &yes}); err != nil {
		t.Fatalf("giteatest: archive %s: %v", repo, err)
	}
}

// Merge merges pull request number of AdminUser's repository repo with a merge commit,
// as its author would from the web page. Gitea answers 405 while it is still checking
// whether the request merges cleanly; that is waited out, within a deadline.
func (s *Server) Merge(t testing.TB, repo string, number int64) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		// The SDK answers a refused merge with its status alone (ok false, no error).
		ok, resp, err := s.Client.MergePullRequest(s.AdminUser, repo, number, gitea.MergePullRequestOption{
			Style: gitea.MergeStyleMerge,
		})
		if ok {
			return
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		if err != nil || status != http.StatusMethodNotAllowed || time.Now().After(deadline) {
			t.Fatalf("giteatest: merge %s#%d: HTTP %d, %v", repo, number, status, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
