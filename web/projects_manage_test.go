package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// projectsSite is a site whose owner Ada is signed in, and whose hub takes http
// repositories on loopback (as it takes webhooks there): the tests' git server.
func projectsSite(t *testing.T) (*site, string) {
	t.Helper()
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.WebhookAllowInsecure = true }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page := s.signIn("ada-1")
	return s, csrfOf(t, page)
}

// send posts form to path, or gets the page when form is nil.
func (s *site) send(path string, form url.Values) (int, string, string) {
	s.t.Helper()
	if form == nil {
		return s.get(path)
	}
	return s.post(path, form)
}

// projectRow is the projects page's row of the project named name ("" when none).
func projectRow(page, name string) string {
	for _, row := range strings.Split(page, "<tr>") {
		if strings.Contains(row, ">"+name+"</a>") {
			return row
		}
	}
	return ""
}

// waitRow reloads the projects page until the project's row holds want, as an owner
// watching it mirror would, and returns the row.
func (s *site) waitRow(name, want string) string {
	s.t.Helper()
	return eventually.Value(s.t, time.Minute, fmt.Sprintf("%q in the row of %s", want, name), func() (string, error) {
		_, _, page := s.get("/app/projects")
		if row := projectRow(page, name); strings.Contains(row, want) {
			return row, nil
		}
		return "", fmt.Errorf("got:\n%s", page)
	})
}

// projectNamed is the account's live project named name, as the store has it.
func (s *site) projectNamed(name string) *core.Project {
	s.t.Helper()
	list, err := s.hub.PG().ListProjects(context.Background(), s.hub.Account.ID)
	if err != nil {
		s.t.Fatal(err)
	}
	i := slices.IndexFunc(list, func(p *core.Project) bool { return p.DisplayName == name })
	if i < 0 {
		s.t.Fatalf("the account has no project named %q", name)
	}
	return list[i]
}

// An owner adds a private repository with a token that does not reach it: the page
// shows the project failed with git's reason. Fixed with the right token it is mirrored
// again, and ready; then its push and pull request settings change. The token is
// never on any page, and is stored sealed; the audit log names the owner.
func TestAnOwnerAddsAProjectSeesItMirrorAndFixesIt(t *testing.T) {
	s, csrf := projectsSite(t)
	const token, wrong = "tok-right-5c1e9a", "tok-wrong-77d0b2"
	repo, seen := hubtest.PrivateRepository(t, token)

	code, path, page := s.post("/app/projects", url.Values{"csrf": {csrf}, "repository": {repo}, "name": {"private app"}, "credential": {wrong}})
	if code != 200 || path != "/app/projects" || !strings.Contains(noticeOf(page), "Saved private app.") {
		t.Fatalf("expected the project added and the list shown, got %d at %s (%s)", code, path, noticeOf(page))
	}
	row := s.waitRow("private app", "badge-failed")
	if !strings.Contains(row, ">failed</span>") || !strings.Contains(row, "Authentication failed") || !strings.Contains(row, "<code>"+repo+"</code>") {
		t.Fatalf("expected the project failed with git's reason, got:\n%s", row)
	}
	p := s.projectNamed("private app")
	if p.CredentialKind != core.CredentialToken || len(p.SealedCredential) == 0 || bytes.Contains(p.SealedCredential, []byte(wrong)) {
		t.Fatalf("expected the token stored sealed, got kind %q, %d bytes", p.CredentialKind, len(p.SealedCredential))
	}

	fix := "/app/projects/" + p.ID + "/fix"
	code, _, page = s.get(fix)
	if code != 200 || !strings.Contains(page, `value="private app"`) || !strings.Contains(page, "credential: a token") {
		t.Fatalf("expected the fix form, got %d (%s)", code, noticeOf(page))
	}
	form := url.Values{"csrf": {csrf}, "name": {"private app"}, "default_branch": {""}, "pull_requests": {"off"}, "credential": {token}}
	if code, _, page = s.post(fix, form); code != 200 || !strings.Contains(noticeOf(page), "Saved private app.") {
		t.Fatalf("expected the fix saved, got %d (%s)", code, noticeOf(page))
	}
	row = s.waitRow("private app", "badge-idle")
	if !strings.Contains(row, ">ready</span>") || !strings.Contains(row, "<code>main</code>") || !strings.Contains(row, "does not push") {
		t.Fatalf("expected the project ready on main, got:\n%s", row)
	}
	if got := seen(); !slices.Contains(got, wrong) || !slices.Contains(got, token) {
		t.Fatalf("expected the repository reached with the wrong token, then the right one, got %q", got)
	}

	// A new credential is tried on the repository before it is kept.
	const other = "tok-other-0e5c44"
	kept := s.projectNamed("private app").SealedCredential
	form = url.Values{"csrf": {csrf}, "name": {"private app"}, "default_branch": {"main"}, "pull_requests": {"off"}, "credential": {other}}
	if code, _, page = s.post(fix, form); code != 400 || !strings.Contains(noticeOf(page), "could not be fetched with the new credential") ||
		!strings.Contains(noticeOf(page), "Authentication failed") || strings.Contains(page, other) {
		t.Fatalf("expected a credential that does not reach the repository refused, got %d (%s)", code, noticeOf(page))
	}
	if got := seen(); !slices.Contains(got, other) {
		t.Fatalf("expected the new credential tried, got %q", got)
	}
	if q := s.projectNamed("private app"); !bytes.Equal(q.SealedCredential, kept) || q.State != core.ProjectReady || !q.RemoteGuarded {
		t.Fatalf("expected the project ready with its credential, its remote guarded as an owner's, got %+v", q)
	}

	// A branch the repository lacks is refused in words, the form kept; the settings change.
	form = url.Values{"csrf": {csrf}, "name": {"app"}, "default_branch": {"nope"}, "push": {"on"}, "pull_requests": {"off"}}
	if code, _, page = s.post(fix, form); code != 400 || !strings.Contains(noticeOf(page), `no branch "nope"`) || !strings.Contains(page, `value="nope"`) {
		t.Fatalf("expected a missing branch refused with the form kept, got %d (%s)", code, noticeOf(page))
	}
	form.Set("default_branch", "main")
	if code, _, page = s.post(fix, form); code != 200 || !strings.Contains(projectRow(page, "app"), "pushes each turn's commits") {
		t.Fatalf("expected the project renamed and pushing, got %d (%s):\n%s", code, noticeOf(page), page)
	}
	// Pull requests need the forge, which a loopback URL does not tell: named, they are on.
	form.Set("pull_requests", core.PullRequestsDraft)
	if code, _, page = s.post(fix, form); code != 400 || !strings.Contains(noticeOf(page), "need the repository's forge") {
		t.Fatalf("expected pull requests refused without a forge, got %d (%s)", code, noticeOf(page))
	}
	form.Set("forge", core.ForgeGitea)
	if code, _, page = s.post(fix, form); code != 200 || !strings.Contains(projectRow(page, "app"), "pull requests draft") {
		t.Fatalf("expected draft pull requests on gitea, got %d (%s)", code, noticeOf(page))
	}
	if p := s.projectNamed("app"); p.Forge != core.ForgeGitea || p.PullRequests != core.PullRequestsDraft || !p.Push || p.State != core.ProjectReady {
		t.Fatalf("expected the project on gitea, pushing, draft pull requests, ready; got %+v", p)
	}

	for _, path := range []string{"/app/projects", fix, secretsPath(p.ID), "/app/audit"} {
		if _, _, page := s.get(path); strings.Contains(page, token) || strings.Contains(page, wrong) {
			t.Errorf("%s shows a token:\n%s", path, page)
		}
	}
	_, _, page = s.get("/app/audit")
	for _, want := range []string{`<td data-label="What">project.added</td>`, "credential replaced", "name &#34;app&#34;, push true", "forge gitea, pull requests draft"} {
		if !strings.Contains(page, want) {
			t.Errorf("expected the audit log to hold %q:\n%s", want, page)
		}
	}
}

// A repository on the hub's disk, or on another transport than https and ssh, stays an
// operator's command: refused in words, nothing added, the form filled again but for
// its credential. So is a repository without a credential.
func TestTheAppRefusesARepositoryOnTheHubsDisk(t *testing.T) {
	s, csrf := projectsSite(t)
	local := hubtest.GitRepo(t)
	const credential = "tok-echo-me-not-3b9"
	for _, tc := range []struct{ repo, credential, want string }{
		{local, credential, "names a path on the hub's disk"},
		{"file://" + local, credential, "names a path on the hub's disk"},
		{"git://example.com/team/app.git", credential, "must be https:// or ssh://"},
		{"http://example.com/team/app.git", credential, "must use https"},
		{"https://10.1.2.3/team/app.git", credential, "not an IP address"},
		{"https://example.com/team/app.git", "  ", "give a token"},
		{"git@example.com:team/app.git", "", "give a deploy key"},
	} {
		code, _, page := s.post("/app/projects", url.Values{"csrf": {csrf}, "repository": {tc.repo}, "name": {"refused"}, "credential": {tc.credential}})
		if code != 400 || !strings.Contains(noticeOf(page), tc.want) || !strings.Contains(page, `value="`+tc.repo+`"`) {
			t.Errorf("%q: expected it refused saying %q with the form kept, got %d (%s)", tc.repo, tc.want, code, noticeOf(page))
		}
		if strings.Contains(page, credential) {
			t.Errorf("%q: the refusal shows the credential back", tc.repo)
		}
	}
	// Without its token, a form is refused before anything is read.
	if code, _, _ := s.post("/app/projects", url.Values{"repository": {"https://example.com/team/app.git"}, "credential": {credential}}); code != 403 {
		t.Errorf("expected a form without its token refused with 403, got %d", code)
	}
	if list, err := s.hub.PG().ListProjects(context.Background(), s.hub.Account.ID); err != nil || len(list) != 1 {
		t.Fatalf("expected only the test's project, got %d (%v)", len(list), err)
	}
}

// A member is refused every project page and form with the app's 403 page, and
// nothing changes; another account's project is not found.
func TestAMemberCannotAddFixOrRemoveProjects(t *testing.T) {
	s := newSite(t)
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	_, _, page := s.signIn("bob-1")
	csrf := csrfOf(t, page)
	id := s.hub.Project.ID
	for _, r := range []struct {
		path string
		form url.Values
	}{
		{"/app/projects/" + id + "/fix", nil},
		{"/app/projects/" + id + "/remove", nil},
		{"/app/projects", url.Values{"csrf": {csrf}, "repository": {"https://example.com/team/app.git"}, "credential": {"tok-member-1"}}},
		{"/app/projects/" + id + "/fix", url.Values{"csrf": {csrf}, "name": {"mine"}, "pull_requests": {"off"}}},
		{"/app/projects/" + id + "/remove", url.Values{"csrf": {csrf}}},
		{"/app/projects/" + id + "/forge", url.Values{"csrf": {csrf}, "events": {"on"}, "secret": {"member-secret-1"}}},
	} {
		code, _, body := s.send(r.path, r.form)
		if code != 403 || !strings.Contains(body, "only the account") {
			t.Errorf("%s (form %v): expected a member refused with 403, got %d (%s)", r.path, r.form != nil, code, noticeOf(body))
		}
	}
	list, err := s.hub.PG().ListProjects(context.Background(), s.hub.Account.ID)
	if err != nil || len(list) != 1 || list[0].DisplayName != s.hub.Project.DisplayName {
		t.Fatalf("expected the account's one project unchanged, got %d (%v)", len(list), err)
	}

	other, _ := s.hub.NewAccount(true)
	theirs, err := s.hub.Service.Admin.AddProject(context.Background(), core.AddProjectInput{AccountID: other.ID, Repository: "https://example.com/theirs.git"})
	if err != nil {
		t.Fatal(err)
	}
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page = s.signIn("ada-1")
	forge := url.Values{"csrf": {csrfOf(t, page)}, "events": {"on"}, "secret": {"owner-secret-2"}}
	if code, _, body := s.post("/app/projects/"+theirs.ID+"/forge", forge); code != 404 {
		t.Errorf("expected another account's project's forge events not found, got %d (%s)", code, noticeOf(body))
	}
	for _, path := range []string{"/app/projects/" + theirs.ID + "/fix", "/app/projects/" + theirs.ID + "/remove"} {
		if code, _, body := s.get(path); code != 404 || !strings.Contains(noticeOf(body), "no such project") {
			t.Errorf("GET %s: expected another account's project not found, got %d (%s)", path, code, noticeOf(body))
		}
		if code, _, body := s.post(path, url.Values{"csrf": {csrfOf(t, page)}, "name": {"mine"}, "pull_requests": {"off"}}); code != 404 {
			t.Errorf("POST %s: expected another account's project not found, got %d (%s)", path, code, noticeOf(body))
		}
	}
	if p, err := s.hub.PG().GetProjectByID(context.Background(), theirs.ID); err != nil || p.RemovedAt != nil || p.DisplayName != "theirs" {
		t.Errorf("expected the other account's project untouched, got %+v (%v)", p, err)
	}
}

// Removing asks first on the generic confirm page, which changes nothing; its form
// removes the project: gone from the list and the start form, audited as the owner's.
// A project a live workspace uses stays, and the page says why.
func TestAnOwnerRemovesAProjectThroughTheConfirmPage(t *testing.T) {
	s, csrf := projectsSite(t)
	repo := hubtest.HostedRepository(t, false)
	if code, _, page := s.post("/app/projects", url.Values{"csrf": {csrf}, "repository": {repo}, "name": {"hosted"}, "credential": {"tok-any-4e1"}}); code != 200 {
		t.Fatalf("expected the project added, got %d (%s)", code, noticeOf(page))
	}
	s.waitRow("hosted", "badge-idle")
	p := s.projectNamed("hosted")
	remove := "/app/projects/" + p.ID + "/remove"

	code, _, page := s.get(remove)
	if code != 200 || !strings.Contains(page, "Remove the project hosted ("+repo+")?") || !strings.Contains(page, `action="`+remove+`"`) {
		t.Fatalf("expected the remove asked on the confirm page, got %d (%s)", code, noticeOf(page))
	}
	if _, _, page := s.get("/app/projects"); projectRow(page, "hosted") == "" {
		t.Fatal("the project went while its remove was only asked")
	}

	// The test's own project has a workspace that is live (queued: this hub runs none).
	s.hub.Call("POST", "/v1/api/workspaces", s.hub.Key, map[string]any{"agent": "agent_1", "model": "m", "projectId": s.hub.Project.ID}).Expect(t, 201, "")
	code, _, page = s.post("/app/projects/"+s.hub.Project.ID+"/remove", url.Values{"csrf": {csrf}})
	if code != 409 || !strings.Contains(noticeOf(page), "live workspace(s) use the project") || !strings.Contains(noticeOf(page), "archive them first") {
		t.Errorf("expected a project in use kept, in words, got %d (%s)", code, noticeOf(page))
	}

	code, path, page := s.post(remove, url.Values{"csrf": {csrfOf(t, page)}})
	if code != 200 || path != "/app/projects" || !strings.Contains(noticeOf(page), "Removed the project") || projectRow(page, "hosted") != "" {
		t.Fatalf("expected the project removed and gone from the list, got %d at %s (%s)", code, path, noticeOf(page))
	}
	if got, err := s.hub.PG().GetProjectByID(context.Background(), p.ID); err != nil || got.RemovedAt == nil {
		t.Fatalf("expected the project removed in the store, got %+v (%v)", got, err)
	}
	if _, _, page := s.get("/app/workspaces/new"); strings.Contains(page, p.ID) {
		t.Error("the start form still offers the removed project")
	}
	if _, _, page := s.get("/app/audit"); !strings.Contains(page, `<td data-label="What">project.removed</td>`) {
		t.Errorf("expected the removal in the audit log:\n%s", page)
	}
}

// A project being mirrored cannot be fixed or removed (the mirroring's outcome would
// overwrite the fix); one a stopped hub left mirroring says so, and a fix mirrors it
// again.
func TestAProjectLeftMirroringByAStoppedHubIsMirroredAgainWhenFixed(t *testing.T) {
	s, csrf := projectsSite(t)
	ctx := context.Background()
	repo := hubtest.HostedRepository(t, false)
	p := &core.Project{ID: "prj_1eftm1rr0r1ng0", AccountID: s.hub.Account.ID, Repository: repo, DisplayName: "left",
		State: core.ProjectPreparing, Network: core.NetworkNone, PullRequests: core.PullRequestsOff, CreatedAt: s.clock.Now(), UpdatedAt: s.clock.Now()}
	if err := s.hub.PG().CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	fix := url.Values{"csrf": {csrf}, "name": {"left"}, "pull_requests": {"off"}, "credential": {"tok-left-9a0"}}
	if _, _, page := s.get("/app/projects"); !strings.Contains(projectRow(page, "left"), ">mirroring</span>") {
		t.Fatalf("expected the project shown mirroring:\n%s", projectRow(page, "left"))
	}
	for _, path := range []string{"/app/projects/" + p.ID + "/fix", "/app/projects/" + p.ID + "/remove"} {
		if code, _, page := s.post(path, fix); code != 409 || !strings.Contains(noticeOf(page), "being mirrored") {
			t.Errorf("POST %s: expected a project being mirrored left alone, got %d (%s)", path, code, noticeOf(page))
		}
	}

	s.clock.Advance(16 * time.Minute)
	if _, _, page := s.get("/app/projects"); !strings.Contains(projectRow(page, "left"), "mirroring stopped") {
		t.Fatalf("expected the project shown stopped:\n%s", projectRow(page, "left"))
	}
	if code, _, page := s.post("/app/projects/"+p.ID+"/fix", fix); code != 200 {
		t.Fatalf("expected the fix saved, got %d (%s)", code, noticeOf(page))
	}
	if row := s.waitRow("left", "badge-idle"); !strings.Contains(row, "<code>main</code>") {
		t.Fatalf("expected the project mirrored again, ready on main:\n%s", row)
	}
}

// An ssh remote takes a deploy key (as a textarea sends it, with CRLF): stored sealed
// as one, never shown. A host that does not answer leaves the project failed, in
// ssh's words.
func TestAnOwnerAddsAnSSHProjectWithADeployKey(t *testing.T) {
	s, csrf := projectsSite(t)
	const body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUtZGVwbG95LWtleS1ib2R5"
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\r\n" + body + "\r\n-----END OPENSSH PRIVATE KEY-----\r\n"
	// Port 1 of loopback: nothing listens, so ssh is refused at once.
	repo := "ssh://git@127.0.0.1:1/team/app.git"
	if code, _, page := s.post("/app/projects", url.Values{"csrf": {csrf}, "repository": {repo}, "name": {"by ssh"}, "credential": {key}}); code != 200 || strings.Contains(page, body) {
		t.Fatalf("expected the project added without its key on the page, got %d (%s)", code, noticeOf(page))
	}
	row := s.waitRow("by ssh", "badge-failed")
	if !strings.Contains(row, "Connection refused") || strings.Contains(row, body) {
		t.Fatalf("expected the project failed in ssh's words, got:\n%s", row)
	}
	p := s.projectNamed("by ssh")
	if p.CredentialKind != core.CredentialSSHKey || len(p.SealedCredential) == 0 || bytes.Contains(p.SealedCredential, []byte(body)) {
		t.Fatalf("expected a deploy key stored sealed, got kind %q, %d bytes", p.CredentialKind, len(p.SealedCredential))
	}
	if _, _, page := s.get("/app/projects/" + p.ID + "/fix"); !strings.Contains(page, "credential: a deploy key") || strings.Contains(page, body) {
		t.Errorf("expected the fix form to name a deploy key without showing it")
	}
}

// Owners add a bounded number of projects (each is a mirror on the hub's disk): past
// core.MaxAppProjects the form is refused in words and nothing is added.
func TestTheAppAddsABoundedNumberOfProjects(t *testing.T) {
	t.Parallel()
	s, csrf := projectsSite(t)
	ctx := context.Background()
	for i := 1; i < core.MaxAppProjects; i++ { // the site's own project is the first
		if _, err := s.hub.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: s.hub.Account.ID,
			Repository: fmt.Sprintf("https://example.com/team/p%d.git", i)}); err != nil {
			t.Fatal(err)
		}
	}
	code, _, page := s.post("/app/projects", url.Values{"csrf": {csrf}, "repository": {"https://example.com/team/one-more.git"},
		"credential": {"tok-one-more"}})
	if code != 429 || !strings.Contains(noticeOf(page), "remove one first") || strings.Contains(page, "tok-one-more") {
		t.Fatalf("expected the 51st project refused in words, got %d (%s)", code, noticeOf(page))
	}
	if list, err := s.hub.PG().ListProjects(ctx, s.hub.Account.ID); err != nil || len(list) != core.MaxAppProjects {
		t.Fatalf("expected %d projects, got %d (%v)", core.MaxAppProjects, len(list), err)
	}
}
