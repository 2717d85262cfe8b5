package gitlab_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/wshub/wshub/internal/testkit/forgetest/gitlab"
)

// call sends a request to the fake and decodes its JSON answer; a body starting "{"
// is sent as JSON, any other as a form.
func call(t *testing.T, method, target, token, body string) (int, any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("PRIVATE-TOKEN", token)
	}
	if strings.HasPrefix(body, "{") {
		req.Header.Set("Content-Type", "application/json")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s %s: the answer is not JSON: %s", method, target, data)
	}
	return resp.StatusCode, v
}

func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRefusalsAreGitLabsBodies(t *testing.T) {
	s := gitlab.Start(t)
	s.NewRepo(t, "acme/sub/widgets")
	s.PushBranch(t, "acme/sub/widgets", "feature")
	s.Grant("glpat-dev", "acme/sub/widgets", gitlab.Write)
	s.Grant("glpat-rep", "acme/sub/widgets", gitlab.Read)
	mrs := s.URL + "/api/v4/projects/" + url.PathEscape("acme/sub/widgets") + "/merge_requests"
	create := `{"title":"t","source_branch":"feature","target_branch":"main"}`
	if status, v := call(t, "POST", mrs, "glpat-dev", create); status != 201 {
		t.Fatalf("expected the first create to succeed, got %d %v", status, v)
	}
	for _, c := range []struct {
		name, method, url, token, body string
		status                         int
		want                           string
	}{
		{"a second merge request from the branch", "POST", mrs, "glpat-dev", create, 409,
			`{"message":["Another open merge request already exists for this source branch: !1"]}`},
		{"the target as source", "POST", mrs, "glpat-dev", `{"title":"t","source_branch":"main","target_branch":"main"}`, 422,
			`{"message":["You can't use same project/branch for source and target"]}`},
		{"a source that is no branch", "POST", mrs, "glpat-dev", `{"title":"t","source_branch":"nope","target_branch":"main"}`, 422,
			`{"message":["Source branch \"nope\" does not exist"]}`},
		{"no title", "POST", mrs, "glpat-dev", `{"source_branch":"feature","target_branch":"main"}`, 400,
			`{"error":"title is missing"}`},
		{"a wrong token", "GET", mrs, "glpat-wrong", "", 401, `{"message":"401 Unauthorized"}`},
		{"a write without a token", "POST", mrs, "", create, 401, `{"message":"401 Unauthorized"}`},
		{"a read without a token", "GET", mrs, "", "", 404, `{"message":"404 Project Not Found"}`},
		{"a Reporter's write", "POST", mrs, "glpat-rep", create, 403, `{"message":"403 Forbidden"}`},
		{"an unknown project", "GET", s.URL + "/api/v4/projects/acme%2Fgadgets/merge_requests", "glpat-dev", "", 404,
			`{"message":"404 Project Not Found"}`},
		{"an unknown merge request", "GET", mrs + "/9", "glpat-dev", "", 404, `{"message":"404 Not found"}`},
		{"a state GitLab does not know", "GET", mrs + "?state=open", "glpat-dev", "", 400,
			`{"error":"state does not have a valid value"}`},
	} {
		status, got := call(t, c.method, c.url, c.token, c.body)
		if want := jsonOf(t, c.want); status != c.status || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: expected %d %s, got %d %v", c.name, c.status, c.want, status, got)
		}
	}
	s.Archive("acme/sub/widgets")
	if status, got := call(t, "PUT", mrs+"/1", "glpat-dev", `{"description":"d"}`); status != 403 || !reflect.DeepEqual(got, jsonOf(t, `{"message":"403 Forbidden"}`)) {
		t.Errorf("archived: expected 403 Forbidden, got %d %v", status, got)
	}
}

func TestAMergeRequestIsRenderedAsGitLabRendersIt(t *testing.T) {
	s := gitlab.Start(t)
	s.NewRepo(t, "acme/widgets")
	s.PushBranch(t, "acme/widgets", "feature")
	s.Grant("glpat-dev", "acme/widgets", gitlab.Write)
	// By numeric id, as a form: both are GitLab's.
	mrs := s.URL + "/api/v4/projects/" + strconv.FormatInt(s.ProjectID("acme/widgets"), 10) + "/merge_requests"
	status, created := call(t, "POST", mrs, "glpat-dev", url.Values{"title": {"Draft: t"}, "source_branch": {"feature"}, "target_branch": {"main"}}.Encode())
	mr, _ := created.(map[string]any)
	if status != 201 || mr["iid"] != 1.0 || mr["state"] != "opened" || mr["draft"] != true || mr["title"] != "Draft: t" ||
		mr["web_url"] != s.URL+"/acme/widgets/-/merge_requests/1" || mr["source_branch"] != "feature" {
		t.Fatalf("expected an opened draft !1 from feature, got %d %v", status, created)
	}
	status, updated := call(t, "PUT", mrs+"/1", "glpat-dev", `{"title":"t"}`)
	if mr, _ := updated.(map[string]any); status != 200 || mr["draft"] != false {
		t.Errorf("expected a title without the prefix to make it ready, got %d %v", status, updated)
	}
	s.Merge("acme/widgets", 1)
	_, list := call(t, "GET", mrs+"?state=merged&source_branch=feature", "glpat-dev", "")
	if items, _ := list.([]any); len(items) != 1 || items[0].(map[string]any)["merged_at"] == nil {
		t.Errorf("expected the merged merge request listed with merged_at, got %v", list)
	}
	_, opened := call(t, "GET", mrs+"?state=opened", "glpat-dev", "")
	if items, _ := opened.([]any); len(items) != 0 {
		t.Errorf("expected no opened merge request, got %v", opened)
	}
}

func TestDraftIsReadFromTheTitleAsGitLabReadsIt(t *testing.T) {
	for title, draft := range map[string]bool{
		"Draft: fix": true, "draft: fix": true, "[Draft] fix": true, "(draft) fix": true, "Draft - fix": true,
		"fix": false, "Drafting the fix": false, "A Draft: fix": false,
	} {
		if got := (gitlab.MergeRequest{Title: title}).Draft(); got != draft {
			t.Errorf("%q: expected draft %v, got %v", title, draft, got)
		}
	}
}

func TestARouteTheFakeDoesNotServeIs404AndRecorded(t *testing.T) {
	s := gitlab.Start(t)
	if status, got := call(t, "GET", s.URL+"/api/v4/projects/acme%2Fwidgets", "glpat", ""); status != 404 || !reflect.DeepEqual(got, jsonOf(t, `{"message":"404 Not Found"}`)) {
		t.Errorf("expected GitLab's 404, got %d %v", status, got)
	}
	if got := s.TakeUnexpected(); !reflect.DeepEqual(got, []string{"GET /api/v4/projects/acme%2Fwidgets"}) {
		t.Errorf("expected the route recorded, got %q", got)
	}
}
