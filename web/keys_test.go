package web_test

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
)

// The key form limits a key to scopes, projects and an expiry; the list shows them,
// and the API holds the key to them.
func TestAnOwnerMakesAKeyLimitedToAScopeAndAProject(t *testing.T) {
	s := newSite(t)
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.signIn("ada-1")
	_, _, page := s.get("/app/keys")
	if !strings.Contains(page, `value="workspaces:read"`) || !strings.Contains(page, `value="`+s.hub.Project.ID+`"`) {
		t.Fatalf("expected the form to offer the scopes and the account's project:\n%s", page)
	}
	expires := time.Now().UTC().Add(48 * time.Hour).Format("2006-01-02T15:04")
	code, _, page := s.post("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {"reader"},
		"scopes": {"projects:read", "workspaces:read"}, "projects": {s.hub.Project.ID}, "expires": {expires}})
	m := newKey.FindStringSubmatch(page)
	if code != 201 || m == nil {
		t.Fatalf("expected the new key shown once, got %d:\n%s", code, page)
	}
	row := regexp.MustCompile(`<td>reader</td>(?s:.*?)</tr>`).FindString(page)
	if !strings.Contains(row, `<td data-label="Scopes">projects:read, workspaces:read</td>`) ||
		!strings.Contains(row, `<td data-label="Projects">`+s.hub.Project.DisplayName+"</td>") ||
		!strings.Contains(row, expires[:10]) {
		t.Errorf("expected the key's row to show its scopes, project and expiry %s, got %s", expires, row)
	}
	s.hub.Call("GET", "/v1/api/projects", m[1], nil).Expect(t, 200, "")
	s.hub.Call("GET", "/v1/api/webhooks", m[1], nil).Expect(t, 403, core.CodeKeyScopeRequired)
	// The audit log keeps what the key reaches, beside who made it.
	entries, err := s.hub.PG().ListAudit(t.Context(), s.hub.Account.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := "reader (scopes projects:read, workspaces:read; projects " + s.hub.Project.ID + "; expires " + expires[:10]
	if i := slices.IndexFunc(entries, func(e *core.AuditEntry) bool { return e.Action == core.AuditKeyCreated }); i < 0 ||
		!strings.HasPrefix(entries[i].Detail, want) {
		t.Errorf("expected the key's creation audited with its limits %q, got %+v", want, entries)
	}

	// A scope the hub does not know is refused in words, and no key is made.
	code, _, page = s.post("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {"bad"}, "scopes": {"everything"}})
	if code != 400 || !strings.Contains(page, "unknown scope") || newKey.MatchString(page) {
		t.Errorf("expected an unknown scope refused with 400 in words, got %d:\n%s", code, page)
	}
}
