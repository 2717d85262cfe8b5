package api_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/api"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// scopedKey makes a key of the hub's account limited as in says.
func scopedKey(t *testing.T, h *hubtest.Hub, in core.NewKeyInput) (*core.APIKey, string) {
	t.Helper()
	in.AccountID = h.Account.ID
	if in.Name == "" {
		in.Name = "scoped"
	}
	k, secret, err := h.Service.Admin.CreateLimitedAPIKey(context.Background(), in)
	if err != nil {
		t.Fatalf("create key %+v: %v", in, err)
	}
	return k, secret
}

// pathParam fills a route's path parameters with ids that exist nowhere.
var pathParam = regexp.MustCompile(`\{[A-Za-z]+\}`)

// scopeRouteBody is a body each route would take, so that only the scope decides.
func scopeRouteBody(r api.RouteScope) any {
	switch {
	case r.Method == "POST" && r.Path == "/v1/api/workspaces":
		return map[string]any{"agent": "agent_1", "model": "m"}
	case strings.HasSuffix(r.Path, "/messages") && r.Method == "POST":
		return map[string]any{"text": "hi"}
	case strings.HasSuffix(r.Path, "/attachments"):
		return []byte(`{"a":1}`)
	case strings.HasSuffix(r.Path, "/approvals/{approvalId}"):
		return map[string]any{"decision": "allow"}
	case r.Method == "POST" && r.Path == "/v1/api/webhooks":
		return map[string]any{"url": "https://hooks.example.com/h"}
	}
	return nil
}

// Every route of the table, so a route added later is covered: a key holding every
// scope but the route's is refused with 403 naming the scope, and a key holding only
// the route's scope is let through to the route itself.
func TestEveryRouteNeedsItsScope(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	only, allBut := map[core.KeyScope]string{}, map[core.KeyScope]string{}
	for _, sc := range core.KeyScopes {
		var rest []string
		for _, other := range core.KeyScopes {
			if other != sc {
				rest = append(rest, string(other))
			}
		}
		_, only[sc] = scopedKey(t, h, core.NewKeyInput{Scopes: string(sc)})
		_, allBut[sc] = scopedKey(t, h, core.NewKeyInput{Scopes: strings.Join(rest, ",")})
	}
	routes := api.RouteScopes()
	if len(routes) < 18 {
		t.Fatalf("expected the route table, got %d routes", len(routes))
	}
	for _, r := range routes {
		path := pathParam.ReplaceAllString(r.Path, "id_0000000000000000")
		t.Run(r.Method+" "+r.Path, func(t *testing.T) {
			if !slices.Contains(core.KeyScopes, r.Scope) {
				t.Fatalf("route declares scope %q, not one of %v", r.Scope, core.KeyScopes)
			}
			without, err := h.Try(r.Method, path, allBut[r.Scope], scopeRouteBody(r))
			if err != nil {
				t.Fatal(err)
			}
			detail, _ := without.Body["detail"].(string)
			if without.Status != 403 || without.Code() != core.CodeKeyScopeRequired || !strings.Contains(detail, string(r.Scope)) {
				t.Errorf("without %s: expected 403 %s naming the scope, got %d %s", r.Scope, core.CodeKeyScopeRequired, without.Status, without.Raw)
			}
			with, err := h.Try(r.Method, path, only[r.Scope], scopeRouteBody(r))
			if err != nil {
				t.Fatal(err)
			}
			if with.Status == 403 || with.Status == 401 {
				t.Errorf("with only %s: expected the route's own answer, got %d %s", r.Scope, with.Status, with.Raw)
			}
		})
	}
	// An upload too large to read is refused before its handler runs: the scope is
	// still checked first, as the key is.
	t.Run("an oversized upload", func(t *testing.T) {
		size := fmt.Sprintf("Content-Length: %d", core.MaxAssetBytes+1)
		attRaw(t, h, attHead(h, "ws_0000000000000000", allBut[core.ScopeAttachmentsWrite], "Content-Type: text/plain", size), nil).
			Expect(t, 403, core.CodeKeyScopeRequired)
		attRaw(t, h, attHead(h, "ws_0000000000000000", only[core.ScopeAttachmentsWrite], "Content-Type: text/plain", size), nil).
			Expect(t, 400, core.CodeInvalidAssetSize)
	})
}

// A key made without limits has every scope: the same calls pass as with the
// account's first key.
func TestAKeyWithoutLimitsKeepsFullAccess(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	k, key := scopedKey(t, h, core.NewKeyInput{Name: "plain"})
	if k.Limits.Limited() {
		t.Fatalf("expected a key made without limits to have none, got %+v", k.Limits)
	}
	for _, r := range api.RouteScopes() {
		path := pathParam.ReplaceAllString(r.Path, "id_0000000000000000")
		got := h.Call(r.Method, path, key, scopeRouteBody(r))
		if got.Status == 403 || got.Status == 401 {
			t.Errorf("%s %s with a key without limits: got %d %s", r.Method, path, got.Status, got.Raw)
		}
	}
}

// A key limited to one project sees that project's workspaces only: another
// project's is not found exactly as a workspace that does not exist, lists leave it
// out, and a create on the other project is an unknown project.
func TestAProjectLimitedKeySeesOnlyItsProjects(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	other := h.NewProject(h.Account.ID, hubtest.GitRepo(t))
	create := func(projectID string) string {
		r := h.Call("POST", "/v1/api/workspaces", h.Key, withAgent(map[string]any{"projectId": projectID})).Expect(t, 201, "")
		return workspaceOf(t, r)["workspaceId"].(string)
	}
	mine, theirs := create(h.Project.ID), create(other.ID)
	_, key := scopedKey(t, h, core.NewKeyInput{Projects: h.Project.ID})

	h.Call("GET", "/v1/api/workspaces/"+mine, key, nil).Expect(t, 200, "")
	unknown := h.Call("GET", "/v1/api/workspaces/ws_0000000000000000", key, nil).Expect(t, 404, core.CodeWorkspaceNotFound)
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/api/workspaces/" + theirs},
		{"GET", "/v1/api/workspaces/" + theirs + "/messages"},
		{"GET", "/v1/api/workspaces/" + theirs + "/events"},
		{"POST", "/v1/api/workspaces/" + theirs + "/messages"},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{"text": "hi"}
		}
		r := h.Call(c.method, c.path, key, body).Expect(t, 404, core.CodeWorkspaceNotFound)
		if string(r.Raw) != string(unknown.Raw) {
			t.Errorf("%s %s: expected the answer of an unknown workspace %s, got %s", c.method, c.path, unknown.Raw, r.Raw)
		}
	}
	list := h.Call("GET", "/v1/api/workspaces", key, nil).Expect(t, 200, "")
	var ids []string
	for _, w := range list.Body["workspaces"].([]any) {
		ids = append(ids, w.(map[string]any)["workspaceId"].(string))
	}
	if !slices.Equal(ids, []string{mine}) {
		t.Errorf("expected the list to hold %s only, got %v", mine, ids)
	}
	projects := h.Call("GET", "/v1/api/projects", key, nil).Expect(t, 200, "").Body["projects"].([]any)
	if len(projects) != 1 || projects[0].(map[string]any)["projectId"] != h.Project.ID {
		t.Errorf("expected the projects list to hold %s only, got %v", h.Project.ID, projects)
	}
	h.Call("POST", "/v1/api/workspaces", key, withAgent(map[string]any{"projectId": other.ID})).Expect(t, 404, core.CodeProjectNotFound)
	// The account has two projects, the key one: the default is the key's.
	r := h.Call("POST", "/v1/api/workspaces", key, withAgent(nil)).Expect(t, 201, "")
	if got := workspaceOf(t, r)["projectId"]; got != h.Project.ID {
		t.Errorf("expected a create naming no project to take the key's %s, got %v", h.Project.ID, got)
	}
}

// An expired key is refused as an unknown one; before its expiry it works.
func TestAnExpiredKeyIsRefusedAsAnUnknownOne(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	expires := time.Now().Add(time.Hour)
	k, key := scopedKey(t, h, core.NewKeyInput{ExpiresAt: &expires})
	h.Call("GET", "/v1/api/projects", key, nil).Expect(t, 200, "")
	// Its hour passed, and its last use with it (so a stamp would be due).
	if _, err := h.PG().DB().Exec(`UPDATE api_keys SET expires_at = now() - interval '1 second',
		last_used_at = now() - interval '2 hours' WHERE id = $1`, k.ID); err != nil {
		t.Fatal(err)
	}
	expired := h.Call("GET", "/v1/api/projects", key, nil).Expect(t, 401, core.CodeInvalidAPIKey)
	unknown := h.Call("GET", "/v1/api/projects", "svc_"+strings.Repeat("0", 43), nil).Expect(t, 401, core.CodeInvalidAPIKey)
	if string(expired.Raw) != string(unknown.Raw) {
		t.Errorf("expected an expired key answered as an unknown one %s, got %s", unknown.Raw, expired.Raw)
	}
	// Its refused tries are no use of it: the last use stays the one before.
	var stale bool
	if err := h.PG().DB().Get(&stale, `SELECT last_used_at < expires_at FROM api_keys WHERE id = $1`, k.ID); err != nil || !stale {
		t.Errorf("expected the key's last use left before its expiry, got %v (%v)", stale, err)
	}
}

// Making a key checks its limits: scopes known, projects the account's, an expiry to
// come.
func TestKeyLimitsAreValidated(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	past := time.Now().Add(-time.Minute)
	for _, c := range []struct {
		in   core.NewKeyInput
		code string
		want string
	}{
		{core.NewKeyInput{Scopes: "workspaces:read,workspaces:delete"}, core.CodeInvalidRequest, `unknown scope "workspaces:delete"`},
		{core.NewKeyInput{Scopes: " , "}, core.CodeInvalidRequest, "at least one scope"},
		{core.NewKeyInput{Projects: "prj_0000000000000000"}, core.CodeProjectNotFound, "prj_0000000000000000"},
		{core.NewKeyInput{Projects: ","}, core.CodeInvalidRequest, "at least one project"},
		{core.NewKeyInput{ExpiresAt: &past}, core.CodeInvalidRequest, "not in the future"},
	} {
		c.in.AccountID, c.in.Name = h.Account.ID, "bad"
		_, _, err := h.Service.Admin.CreateLimitedAPIKey(context.Background(), c.in)
		if core.ErrorCode(err) != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: expected %s saying %q, got %v", c.in, c.code, c.want, err)
		}
	}
	k, _ := scopedKey(t, h, core.NewKeyInput{Scopes: "projects:read, workspaces:read,projects:read", Projects: h.Project.ID})
	keys, err := h.Service.Admin.ListAPIKeys(context.Background(), h.Account.ID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(keys, func(x *core.APIKey) bool { return x.ID == k.ID })
	if i < 0 || fmt.Sprint(keys[i].Limits.Scopes) != "[projects:read workspaces:read]" || !slices.Equal(keys[i].Limits.Projects, []string{h.Project.ID}) {
		t.Errorf("expected the key listed with its scopes and project, got %+v", keys)
	}
}

// The OpenAPI document names each route's scope as the route table does, and has no
// operation the table lacks.
func TestOpenAPIListsEachRoutesScope(t *testing.T) {
	t.Parallel()
	doc, err := hubtest.LoadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	table := map[string]core.KeyScope{}
	for _, r := range api.RouteScopes() {
		table[r.Method+" "+r.Path] = r.Scope
	}
	documented := 0
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/api/") {
			continue
		}
		for method, op := range item.Operations() {
			documented++
			got, _ := op.Extensions["x-wshub-scope"].(string)
			want, ok := table[method+" "+path]
			if !ok {
				t.Errorf("%s %s is documented but not in the route table", method, path)
			} else if got != string(want) {
				t.Errorf("%s %s: the document says x-wshub-scope %q, the route table %q", method, path, got, want)
			}
		}
	}
	if documented != len(table) {
		t.Errorf("expected the document to describe the table's %d routes, found %d operations", len(table), documented)
	}
}
