package web_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/web"
)

// secretsPath is the page of the project's secrets.
func secretsPath(projectID string) string { return "/app/projects/" + projectID + "/secrets" }

// setSecret sends the secrets form and returns the status, where it landed and the page.
func (s *site) setSecret(csrf, projectID, name, value string, agent bool) (int, string, string) {
	s.t.Helper()
	form := url.Values{"csrf": {csrf}, "name": {name}, "value": {value}}
	if agent {
		form.Set("agent", "on")
	}
	return s.post(secretsPath(projectID), form)
}

// secretsOf lists the project's secrets as the operator's command does.
func (s *site) secretsOf(projectID string) []*core.ProjectSecret {
	s.t.Helper()
	list, err := s.hub.Service.ProjectSecrets.List(context.Background(), projectID)
	if err != nil {
		s.t.Fatal(err)
	}
	return list
}

// An owner sets a project's secret from the app: the page lists it by name, never the
// value; the store holds it sealed and the operator's list shows it. Set again under
// its name it is replaced; removed, after a page that asks, it is gone. The audit log
// names the owner for each.
func TestAnOwnerSetsReplacesAndRemovesAProjectsSecret(t *testing.T) {
	s, csrf := ownerSignedIn(t)
	ctx := context.Background()
	// A project recorded before URLs with credentials were refused: its page shows none.
	old := &core.Project{ID: "prj_0ldcredent1a1s", AccountID: s.hub.Account.ID, Repository: "https://x-token:ghp_0ldT0ken@example.com/team/old.git",
		DisplayName: "old", State: core.ProjectConnected, Network: core.NetworkNone, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := s.hub.PG().CreateProject(ctx, old); err != nil {
		t.Fatal(err)
	}

	_, _, page := s.get("/app/workspaces")
	if !strings.Contains(page, `href="/app/projects"`) {
		t.Errorf("expected the owner's navigation to link the projects:\n%s", page)
	}
	code, _, page := s.get("/app/projects")
	if code != 200 || !strings.Contains(page, `href="`+secretsPath(s.hub.Project.ID)+`"`) || !strings.Contains(page, `href="`+secretsPath(old.ID)+`"`) ||
		!strings.Contains(page, "https://example.com/team/old.git") || strings.Contains(page, "ghp_0ldT0ken") || strings.Contains(page, "x-token") {
		t.Fatalf("expected both projects listed with their repositories shown without credentials, got %d:\n%s", code, page)
	}
	// A project with settings of its own shows them (listed with variables by name; the
	// owner's editor holds the settings whole: they are not secrets).
	settings := `{"setup": "npm ci --prefer-offline <&2", "env": {"NODE_ENV": "env-value-9b1"},
		"cache": [{"paths": ["node_modules", "~/.npm"], "keyFiles": ["package-lock.json"]}]}`
	if _, err := s.hub.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: old.ID, Environment: []byte(settings)}); err != nil {
		t.Fatal(err)
	}
	code, _, page = s.get(secretsPath(old.ID))
	for _, want := range []string{`<pre class="setup-log">npm ci --prefer-offline &lt;&amp;2</pre>`, "<code>NODE_ENV</code>",
		"<code>node_modules</code>, <code>~/.npm</code>, keyed by <code>package-lock.json</code>"} {
		if code != 200 || !strings.Contains(page, want) || strings.Contains(page, "ghp_0ldT0ken") {
			t.Errorf("expected the project's own settings shown with %q, variables by name, got %d:\n%s", want, code, page)
		}
	}
	code, _, page = s.get(secretsPath(s.hub.Project.ID))
	if code != 200 || !strings.Contains(page, "No secrets yet.") || !strings.Contains(page, ".wshub/environment.json") ||
		!strings.Contains(page, `autocomplete="off"`) {
		t.Fatalf("expected the project's page with no secrets and where its environment comes from, got %d:\n%s", code, page)
	}

	const first, second = "postgres://ci:first-Pa55@db.internal/test", "second-value-7d2b80"
	code, path, page := s.setSecret(csrf, s.hub.Project.ID, "DATABASE_URL", first, false)
	if code != 200 || path != secretsPath(s.hub.Project.ID) || !strings.Contains(noticeOf(page), "Saved DATABASE_URL.") ||
		!strings.Contains(page, "<code>DATABASE_URL</code>") || !strings.Contains(page, "setup and update only") {
		t.Fatalf("expected the secret saved and listed, got %d at %s (%s):\n%s", code, path, noticeOf(page), page)
	}
	if strings.Contains(page, "first-Pa55") {
		t.Fatalf("the page shows the value it saved:\n%s", page)
	}
	if list := s.secretsOf(s.hub.Project.ID); len(list) != 1 || list[0].Name != "DATABASE_URL" || list[0].Agent {
		t.Fatalf("expected the operator's list to show DATABASE_URL for setup only, got %+v", list)
	}
	stored, err := s.hub.PG().ListProjectSecrets(ctx, s.hub.Project.ID)
	if err != nil || len(stored) != 1 || len(stored[0].SealedValue) == 0 || bytes.Contains(stored[0].SealedValue, []byte("first-Pa55")) {
		t.Fatalf("expected the value stored sealed, got %+v (%v)", stored, err)
	}
	sealedFirst := stored[0].SealedValue
	// The list names each project's secrets (read for all projects at once), never a value.
	if code, _, page := s.get("/app/projects"); code != 200 || !strings.Contains(page, "secrets <code>DATABASE_URL</code>") ||
		strings.Contains(page, "first-Pa55") {
		t.Fatalf("expected the projects list to name the secret without its value, got %d:\n%s", code, page)
	}

	// Set again under its name: replaced, now for the agent too.
	code, _, page = s.setSecret(csrf, s.hub.Project.ID, "DATABASE_URL", second, true)
	if code != 200 || !strings.Contains(page, "setup, update and the agent's turns") || strings.Contains(page, second) {
		t.Fatalf("expected the secret replaced and given to the agent, without its value, got %d:\n%s", code, page)
	}
	stored, err = s.hub.PG().ListProjectSecrets(ctx, s.hub.Project.ID)
	if err != nil || len(stored) != 1 || !stored[0].Agent || bytes.Equal(stored[0].SealedValue, sealedFirst) {
		t.Fatalf("expected one secret, replaced and marked for the agent, got %+v (%v)", stored, err)
	}

	// Removing asks first on a page of its own; only its form removes.
	code, _, page = s.get(secretsPath(s.hub.Project.ID) + "/DATABASE_URL/remove")
	if code != 200 || !strings.Contains(page, "Remove the secret <strong>DATABASE_URL</strong>") {
		t.Fatalf("expected the remove asked on a page naming the secret, got %d:\n%s", code, page)
	}
	if len(s.secretsOf(s.hub.Project.ID)) != 1 {
		t.Fatal("the secret went while its remove was only asked")
	}
	code, path, page = s.post(secretsPath(s.hub.Project.ID)+"/DATABASE_URL/remove", url.Values{"csrf": {csrfOf(t, page)}})
	if code != 200 || path != secretsPath(s.hub.Project.ID) || !strings.Contains(noticeOf(page), "Removed DATABASE_URL") ||
		!strings.Contains(page, "No secrets yet.") {
		t.Fatalf("expected the secret removed, got %d at %s:\n%s", code, path, page)
	}
	if list := s.secretsOf(s.hub.Project.ID); len(list) != 0 {
		t.Fatalf("expected no secret left, got %+v", list)
	}

	_, _, page = s.get("/app/audit")
	for _, want := range []string{`<td data-label="Who">Ada</td>
    <td data-label="What">project.secret_removed</td>
    <td data-label="Which">` + s.hub.Project.ID + `</td>
    <td data-label="Details">DATABASE_URL</td>`, `<td data-label="Who">Ada</td>
    <td data-label="What">project.secret_set</td>
    <td data-label="Which">` + s.hub.Project.ID + `</td>
    <td data-label="Details">DATABASE_URL (given to the agent)</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("expected the audit log to name Ada for %q:\n%s", want, page)
		}
	}
}

// A member gets the refusal the keys page gives: no link, no page, no change.
func TestAMemberCannotReachAProjectsSecrets(t *testing.T) {
	s := newSite(t)
	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	_, _, page := s.signIn("bob-1")
	if strings.Contains(page, `href="/app/projects"`) {
		t.Errorf("a member's page links to the projects:\n%s", page)
	}
	csrf := csrfOf(t, page)
	for _, path := range []string{"/app/projects", secretsPath(s.hub.Project.ID), secretsPath(s.hub.Project.ID) + "/TOKEN/remove"} {
		if code, _, body := s.get(path); code != 403 || !strings.Contains(body, "only the account") {
			t.Errorf("GET %s: expected a member refused with 403, got %d (%s)", path, code, noticeOf(body))
		}
	}
	if code, _, body := s.setSecret(csrf, s.hub.Project.ID, "TOKEN", "member-value", false); code != 403 || strings.Contains(body, "member-value") {
		t.Errorf("expected a member's secret refused with 403, got %d (%s)", code, noticeOf(body))
	}
	if code, _, _ := s.post(secretsPath(s.hub.Project.ID)+"/TOKEN/remove", url.Values{"csrf": {csrf}}); code != 403 {
		t.Errorf("expected a member's remove refused with 403, got %d", code)
	}
	if list := s.secretsOf(s.hub.Project.ID); len(list) != 0 {
		t.Errorf("a member's form set a secret: %+v", list)
	}
}

// Another account's project is not found, whatever is asked of it, as if it did not
// exist; its secrets stay as they were.
func TestAnotherAccountsProjectIsNotFoundOnTheProjectPages(t *testing.T) {
	s, csrf := ownerSignedIn(t)
	ctx := context.Background()
	other, _ := s.hub.NewAccount(true)
	theirs, err := s.hub.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: other.ID, Repository: "https://example.com/theirs.git"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.hub.Service.ProjectSecrets.Set(ctx, core.ProjectSecretInput{ProjectID: theirs.ID, Name: "THEIRS", Value: "their-value"}); err != nil {
		t.Fatal(err)
	}
	if _, _, page := s.get("/app/projects"); strings.Contains(page, theirs.ID) || !strings.Contains(page, s.hub.Project.ID) {
		t.Errorf("expected the list to show the account's project and not another's:\n%s", page)
	}
	if code, _, page := s.get(secretsPath(s.hub.Project.ID)); code != 200 {
		t.Fatalf("expected the account's own project's page, got %d (%s)", code, noticeOf(page))
	}
	for _, id := range []string{theirs.ID, "prj_n0suchpr0ject0"} {
		for _, r := range []struct {
			method, path string
			form         url.Values
		}{
			{"GET", secretsPath(id), nil},
			{"GET", secretsPath(id) + "/THEIRS/remove", nil},
			{"POST", secretsPath(id), url.Values{"csrf": {csrf}, "name": {"THEIRS"}, "value": {"mine-now"}}},
			{"POST", secretsPath(id) + "/THEIRS/remove", url.Values{"csrf": {csrf}}},
		} {
			code, _, body := s.send(r.path, r.form)
			if code != 404 || !strings.Contains(noticeOf(body), "no such project") || strings.Contains(body, "THEIRS</code>") {
				t.Errorf("%s %s: expected 404, got %d (%s)", r.method, r.path, code, noticeOf(body))
			}
		}
	}
	if list := s.secretsOf(theirs.ID); len(list) != 1 || !list[0].CreatedAt.Equal(list[0].UpdatedAt) {
		t.Errorf("expected the other account's secret untouched, got %+v", list)
	}
}

// A refused form says why in words and asks for the value again: the value is never
// written back into the page. Values up to the bound fit the form whatever their
// characters; one past it is refused in words, not cut off as a form too large.
func TestASecretRefusedInWordsIsNeverEchoed(t *testing.T) {
	s, csrf := ownerSignedIn(t)
	id := s.hub.Project.ID
	long := strings.Repeat("v", core.MaxSecretValue+1)
	for _, tc := range []struct {
		name, secret, value, want string
		status                    int
	}{
		{"a name that is no variable's", "1-BAD", "echo-me-not-1", "not a variable name", 400},
		{"a name the hub sets itself", "WSHUB_TOKEN", "echo-me-not-2", "the hub sets that variable itself", 400},
		{"a value too short to mask", "SHORT", "zq~", "at least 4 bytes", 400},
		{"a value past 32 KiB", "LONG", long, "at most 32 KiB", 400},
		{"a value with a NUL", "NUL", "echo-me\x00-not-3", "NUL character", 400},
		{"a value not UTF-8", "BYTES", "echo-me\xff-not-4", "not valid UTF-8", 400},
	} {
		code, _, page := s.setSecret(csrf, id, tc.secret, tc.value, true)
		if code != tc.status || !strings.Contains(noticeOf(page), tc.want) {
			t.Errorf("%s: expected %d saying %q, got %d (%s)", tc.name, tc.status, tc.want, code, noticeOf(page))
		}
		if strings.Contains(page, "echo-me") || strings.Contains(page, "zq~") || strings.Contains(page, strings.Repeat("v", 40)) {
			t.Errorf("%s: the page shows the value back:\n%.2000s", tc.name, page)
		}
		if strings.Contains(noticeOf(page), "not a variable name") &&
			(!strings.Contains(page, `value="1-BAD"`) || !strings.Contains(page, "enter the value again") || !strings.Contains(page, "checked")) {
			t.Errorf("%s: expected the form filled again but for its value:\n%s", tc.name, page)
		}
	}
	if list := s.secretsOf(id); len(list) != 0 {
		t.Fatalf("a refused form set a secret: %+v", list)
	}
	// 32 KiB of two-byte characters: six times that on the wire, still read.
	wide := strings.Repeat("é", core.MaxSecretValue/2)
	if code, _, page := s.setSecret(csrf, id, "WIDE", wide, false); code != 200 || !strings.Contains(noticeOf(page), "Saved WIDE.") {
		t.Fatalf("expected a value of %d bytes saved, got %d (%s)", len(wide), code, noticeOf(page))
	}
	big := url.Values{"csrf": {csrf}, "name": {"HUGE"}, "value": {strings.Repeat("x", web.MaxSecretFormBytes)}}
	if code, _, _ := s.post(secretsPath(id), big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("expected a form past %d bytes refused with 413, got %d", web.MaxSecretFormBytes, code)
	}
	// Without its token, a form is refused before anything is read.
	if code, _, _ := s.post(secretsPath(id), url.Values{"name": {"NO_TOKEN"}, "value": {"value-1234"}}); code != 403 {
		t.Errorf("expected a form without its token refused with 403, got %d", code)
	}
}

// A secret set in the app reaches the setup of the project's next workspace, and what
// the setup prints of it is masked. A value typed with line breaks in the textarea
// (sent as CRLF) arrives with the LF a file would hold.
func TestASecretSetInTheAppReachesTheWorkspacesSetup(t *testing.T) {
	s := workingSite(t)
	dir := hubtest.GitRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, ".wshub"), 0o755); err != nil {
		t.Fatal(err)
	}
	setup := `[ -n "$APP_TOKEN" ] && echo has-secret
echo "printed [$APP_TOKEN]"
echo "sha $(printf %s "$APP_TOKEN" | sha256sum | cut -c1-64)"`
	env, err := json.Marshal(map[string]string{"setup": setup})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".wshub", "environment.json"), env, 0o644); err != nil {
		t.Fatal(err)
	}
	hubtest.Git(t, dir, "add", "-A")
	hubtest.Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "env")
	s.hub.Project = s.hub.NewProject(s.hub.Account.ID, dir)
	s.hub.SetProjectNetwork(core.NetworkNone) // nothing here needs one; starting it costs time
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	_, _, page := s.signIn("ada-1")

	if code, _, page := s.setSecret(csrfOf(t, page), s.hub.Project.ID, "APP_TOKEN", "first-line-31f\r\nsecond-line-c07\r\n", false); code != 200 {
		t.Fatalf("expected the secret saved, got %d (%s)", code, noticeOf(page))
	}
	id := s.start("write never")
	sum := sha256.Sum256([]byte("first-line-31f\nsecond-line-c07"))
	want := "has-secret\nprinted [****\n****]\nsha " + hex.EncodeToString(sum[:]) + "\n"
	if got := setupOutput(t, s.hub, id); got != want {
		t.Fatalf("expected the setup to print:\n%s\ngot:\n%s", want, got)
	}
}

// setupOutput waits for the workspace's setup to finish and returns what it printed,
// as the API's events give it.
func setupOutput(t *testing.T, h *hubtest.Hub, id string) string {
	t.Helper()
	return eventually.Value(t, time.Minute, "workspace "+id+"'s setup finished", func() (string, error) {
		events, err := h.Service.Workspaces.ListTurnEvents(context.Background(), h.Account, id, 0, 200)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for _, e := range events {
			switch e.Type {
			case core.EventSetupOutput:
				out.WriteString(e.Delta)
			case core.EventSetupFinished:
				if e.Outcome != "completed" {
					t.Fatalf("expected the setup to finish, it ended %s: %s", e.Outcome, out.String())
				}
				return out.String(), nil
			}
		}
		return "", fmt.Errorf("printed so far: %q", out.String())
	})
}

// An owner edits the project's environment settings on its page: saved, they are the
// project's (the operator's list shows them) and are shown back; settings a workspace
// could not use are refused in words, the text kept; an empty form removes them. A
// member cannot.
func TestAnOwnerEditsAProjectsEnvironmentSettings(t *testing.T) {
	s, csrf := ownerSignedIn(t)
	path := "/app/projects/" + s.hub.Project.ID + "/environment"
	settings := `{"setup": "npm ci", "env": {"NODE_ENV": "test"}, "cache": [{"paths": ["node_modules"], "keyFiles": ["package-lock.json"]}]}`
	code, at, page := s.post(path, url.Values{"csrf": {csrf}, "environment": {settings}})
	if code != 200 || !strings.HasSuffix(at, "/secrets") || !strings.Contains(noticeOf(page), "Saved the environment") ||
		!strings.Contains(page, "npm ci") || !strings.Contains(page, "&#34;NODE_ENV&#34;: &#34;test&#34;") {
		t.Fatalf("expected the settings saved and shown, got %d at %s (%s)", code, at, noticeOf(page))
	}
	p, err := s.hub.PG().GetProjectByID(context.Background(), s.hub.Project.ID)
	if env := core.ProjectEnvironmentSettings(p); err != nil || env == nil || env.Setup != "npm ci" {
		t.Fatalf("the project holds the settings: %+v %v", env, err)
	}
	code, _, page = s.post(path, url.Values{"csrf": {csrf}, "environment": {`{"setpu": "npm ci"}`}})
	if code != 400 || !strings.Contains(noticeOf(page), `unknown field "setpu"`) || !strings.Contains(page, "&#34;setpu&#34;") {
		t.Errorf("expected unusable settings refused in words with the text kept, got %d (%s)", code, noticeOf(page))
	}
	if p, _ := s.hub.PG().GetProjectByID(context.Background(), s.hub.Project.ID); core.ProjectEnvironmentSettings(p).Setup != "npm ci" {
		t.Error("a refused form changed the settings")
	}
	if code, _, page = s.post(path, url.Values{"csrf": {csrf}, "environment": {"  "}}); code != 200 || !strings.Contains(noticeOf(page), "Removed the environment settings") {
		t.Errorf("expected an empty form to remove the settings, got %d (%s)", code, noticeOf(page))
	}
	if p, _ := s.hub.PG().GetProjectByID(context.Background(), s.hub.Project.ID); len(p.Environment) != 0 {
		t.Errorf("the settings stayed: %s", p.Environment)
	}

	s.person("bob-1", "bob@example.com", "Bob", core.RoleMember)
	_, _, page = s.signIn("bob-1")
	if code, _, _ := s.post(path, url.Values{"csrf": {csrfOf(t, page)}, "environment": {settings}}); code != 403 {
		t.Errorf("expected a member refused with 403, got %d", code)
	}
}
