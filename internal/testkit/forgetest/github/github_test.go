package github_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	gh "github.com/google/go-github/v89/github"

	"github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// call sends a request to the fake and decodes its JSON answer.
func call(t *testing.T, method, url, token, body string) (int, any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s %s: the answer is not JSON: %s", method, url, data)
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

func TestRefusalsAreGitHubsBodies(t *testing.T) {
	s := github.Start(t)
	s.NewRepo(t, "acme", "widgets")
	s.PushBranch(t, "acme", "widgets", "feature")
	s.Grant("ghp_writer", "acme", "widgets", github.Write)
	s.Grant("ghp_reader", "acme", "widgets", github.Read)
	pulls := s.URL + "/api/v3/repos/acme/widgets/pulls"
	create := `{"title":"t","head":"feature","base":"main"}`
	if status, v := call(t, "POST", pulls, "ghp_writer", create); status != 201 {
		t.Fatalf("expected the first create to succeed, got %d %v", status, v)
	}
	for _, c := range []struct {
		name, method, url, token, body string
		status                         int
		want                           string
	}{
		{"a second pull from the branch", "POST", pulls, "ghp_writer", create, 422,
			`{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for acme:feature."}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`},
		{"a branch with nothing new", "POST", pulls, "ghp_writer", `{"title":"t","head":"main","base":"main"}`, 422,
			`{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"No commits between main and main"}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`},
		{"a head that is no branch", "POST", pulls, "ghp_writer", `{"title":"t","head":"nope","base":"main"}`, 422,
			`{"message":"Validation Failed","errors":[{"resource":"PullRequest","field":"head","code":"invalid"}],"documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"422"}`},
		{"a wrong token", "GET", pulls, "ghp_wrong", "", 401,
			`{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}`},
		{"a reader's write", "POST", pulls, "ghp_reader", create, 403,
			`{"message":"Resource not accessible by personal access token","documentation_url":"https://docs.github.com/rest/pulls/pulls#create-a-pull-request","status":"403"}`},
		{"an unknown repository", "GET", s.URL + "/api/v3/repos/acme/gadgets/pulls", "ghp_writer", "", 404,
			`{"message":"Not Found","documentation_url":"https://docs.github.com/rest/pulls/pulls#list-pull-requests","status":"404"}`},
		{"an unknown pull request", "GET", pulls + "/9", "ghp_writer", "", 404,
			`{"message":"Not Found","documentation_url":"https://docs.github.com/rest/pulls/pulls#get-a-pull-request","status":"404"}`},
	} {
		status, got := call(t, c.method, c.url, c.token, c.body)
		if want := jsonOf(t, c.want); status != c.status || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: expected %d %s, got %d %v", c.name, c.status, c.want, status, got)
		}
	}
	s.Archive("acme", "widgets")
	status, got := call(t, "PATCH", pulls+"/1", "ghp_writer", `{"body":"b"}`)
	want := jsonOf(t, `{"message":"Repository was archived so is read-only.","documentation_url":"https://docs.github.com/rest/pulls/pulls#update-a-pull-request","status":"403"}`)
	if status != 403 || !reflect.DeepEqual(got, want) {
		t.Errorf("archived: expected 403 %v, got %d %v", want, status, got)
	}
}

func TestAPullRequestIsRenderedAsGitHubRendersIt(t *testing.T) {
	s := github.Start(t)
	s.NewRepo(t, "acme", "widgets")
	s.PushBranch(t, "acme", "widgets", "feature")
	s.Grant("ghp_writer", "acme", "widgets", github.Write)
	_, created := call(t, "POST", s.URL+"/api/v3/repos/acme/widgets/pulls", "ghp_writer", `{"title":"t","head":"acme:feature","base":"main","draft":true}`)
	pr := created.(map[string]any)
	if pr["number"] != 1.0 || pr["state"] != "open" || pr["draft"] != true || pr["merged"] != false || pr["body"] != nil ||
		pr["html_url"] != s.URL+"/acme/widgets/pull/1" || pr["head"].(map[string]any)["label"] != "acme:feature" {
		t.Errorf("expected an open draft #1 from acme:feature, got %v", pr)
	}
	s.Merge("acme", "widgets", 1)
	_, list := call(t, "GET", s.URL+"/api/v3/repos/acme/widgets/pulls?state=closed&head=acme:feature", "ghp_writer", "")
	items := list.([]any)
	if len(items) != 1 {
		t.Fatalf("expected the merged pull among the closed, got %v", list)
	}
	listed := items[0].(map[string]any)
	if _, has := listed["merged"]; has || listed["merged_at"] == nil || listed["state"] != "closed" {
		t.Errorf("expected a listed pull closed with merged_at and without merged, as GitHub lists it, got %v", listed)
	}
	_, open := call(t, "GET", s.URL+"/api/v3/repos/acme/widgets/pulls", "ghp_writer", "")
	if len(open.([]any)) != 0 {
		t.Errorf("expected state=open by default, got %v", open)
	}
}

// jwt signs claims with key as an App does.
func jwt(t *testing.T, key *rsa.PrivateKey, alg string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(map[string]string{"alg": alg, "typ": "JWT"}) + "." + enc(claims)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func TestAnAppsJWTIsCheckedAsGitHubChecksIt(t *testing.T) {
	s := github.Start(t)
	s.NewRepo(t, "acme", "widgets")
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	s.RegisterApp(42, &key.PublicKey)
	s.Install(42, 7, github.Write, "acme/widgets")
	now := time.Now().Unix()
	url := s.URL + "/api/v3/app/installations/7/access_tokens"
	for _, c := range []struct {
		name   string
		token  string
		status int
		want   string
	}{
		{"another key", jwt(t, other, "RS256", map[string]any{"iss": "42", "iat": now - 30, "exp": now + 90}), 401,
			"A JSON web token could not be decoded"},
		{"another app", jwt(t, key, "RS256", map[string]any{"iss": "43", "iat": now - 30, "exp": now + 90}), 401,
			"A JSON web token could not be decoded"},
		{"not RS256", jwt(t, key, "HS256", map[string]any{"iss": "42", "iat": now - 30, "exp": now + 90}), 401,
			"A JSON web token could not be decoded"},
		{"expired", jwt(t, key, "RS256", map[string]any{"iss": "42", "iat": now - 700, "exp": now - 60}), 401,
			"'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires."},
		{"too long", jwt(t, key, "RS256", map[string]any{"iss": "42", "iat": now, "exp": now + 3600}), 401,
			"'Expiration time' claim ('exp') is too far in the future."},
		{"issued later", jwt(t, key, "RS256", map[string]any{"iss": "42", "iat": now + 300, "exp": now + 500}), 401,
			"'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued."},
	} {
		status, got := call(t, "POST", url, c.token, "")
		if m, _ := got.(map[string]any); status != c.status || m["message"] != c.want {
			t.Errorf("%s: expected %d %q, got %d %v", c.name, c.status, c.want, status, got)
		}
	}
	if n := s.TokensMinted(7); n != 0 {
		t.Fatalf("expected no token minted for a bad JWT, got %d", n)
	}

	// A number as iss is as good as a string.
	status, got := call(t, "POST", url, jwt(t, key, "RS256", map[string]any{"iss": 42, "iat": now - 30, "exp": now + 90}), "")
	m, _ := got.(map[string]any)
	expires, _ := time.Parse(time.RFC3339, fmt.Sprint(m["expires_at"]))
	if status != 201 || !strings.HasPrefix(fmt.Sprint(m["token"]), "ghs_") || time.Until(expires) < 59*time.Minute || time.Until(expires) > time.Hour {
		t.Fatalf("expected a token for an hour, got %d %v", status, got)
	}
	if status, _ := call(t, "POST", s.URL+"/api/v3/app/installations/8/access_tokens", jwt(t, key, "RS256", map[string]any{"iss": "42", "iat": now - 30, "exp": now + 90}), ""); status != 404 {
		t.Errorf("expected 404 for an installation that is not the App's, got %d", status)
	}
}

func TestARouteTheFakeDoesNotServeIs404AndRecorded(t *testing.T) {
	s := github.Start(t)
	s.NewRepo(t, "acme", "widgets")
	s.Grant("ghp_writer", "acme", "widgets", github.Write)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v3/repos/acme/widgets"},
		{"DELETE", "/api/v3/repos/acme/widgets/pulls"},
		{"GET", "/api/v3/user"},
	} {
		if status, got := call(t, c.method, s.URL+c.path, "ghp_writer", ""); status != 404 || got.(map[string]any)["message"] != "Not Found" {
			t.Errorf("%s %s: expected GitHub's 404, got %d %v", c.method, c.path, status, got)
		}
	}
	want := []string{"GET /api/v3/repos/acme/widgets", "DELETE /api/v3/repos/acme/widgets/pulls", "GET /api/v3/user"}
	if got := s.TakeUnexpected(); !reflect.DeepEqual(got, want) {
		t.Errorf("expected %q recorded, got %q", want, got)
	}
}

func TestGoGitHubReachesTheFakeAsAGitHubEnterpriseServer(t *testing.T) {
	s := github.Start(t)
	s.NewRepo(t, "acme", "widgets")
	s.Grant("ghp_reader", "acme", "widgets", github.Read)
	c, err := gh.NewClient(gh.WithEnterpriseURLs(s.URL, s.URL), gh.WithAuthToken("ghp_reader"))
	if err != nil {
		t.Fatal(err)
	}
	prs, _, err := c.PullRequests.List(t.Context(), "acme", "widgets", &gh.PullRequestListOptions{State: "all"})
	if err != nil || len(prs) != 0 {
		t.Fatalf("expected an empty list, got %v, %v", prs, err)
	}
}
