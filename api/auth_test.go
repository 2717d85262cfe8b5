package api_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// authEndpoint is one documented endpoint with a body that would pass validation.
type authEndpoint struct {
	method, path string
	body         any
}

// authEndpoints lists every endpoint of api.md section 4. {ws} and {wh} are ids that
// exist nowhere.
var authEndpoints = []authEndpoint{
	{"POST", "/v1/api/workspaces", map[string]any{"agent": "agent_1", "model": "m"}},
	{"GET", "/v1/api/workspaces", nil},
	{"GET", "/v1/api/workspaces/ws_0000000000000000", nil},
	{"POST", "/v1/api/workspaces/ws_0000000000000000/messages", map[string]any{"text": "hi"}},
	{"GET", "/v1/api/workspaces/ws_0000000000000000/messages", nil},
	{"POST", "/v1/api/workspaces/ws_0000000000000000/attachments", []byte("hello")},
	{"GET", "/v1/api/projects", nil},
	{"GET", "/v1/api/agents", nil},
	{"GET", "/v1/api/providers", nil},
	{"POST", "/v1/api/webhooks", map[string]any{"url": "https://hooks.example.com/h"}},
	{"GET", "/v1/api/webhooks", nil},
	{"DELETE", "/v1/api/webhooks/wh_0000000000000000", nil},
}

// authForbidden are strings an error detail must never carry (internals).
var authForbidden = []string{"sql", "pq:", "/work", "goroutine", "panic", ".go:", "postgres", "runtime error", "0x"}

// publicID matches the ids a detail may name (an account's, to tell the operator which
// one): random letters that may spell "0x" or "sql" by chance, so they are taken out
// before the check.
var publicID = regexp.MustCompile(`\b(acct|key|prj|ws|msg|turn|asset|wh|evt)_[A-Za-z0-9]+`)

// authCheckErrorBody asserts r is an error body {error, detail} that leaks nothing.
func authCheckErrorBody(t *testing.T, r *hubtest.Response) {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("error %d has Content-Type %q, want JSON", r.Status, ct)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Errorf("error %d body is not a JSON object: %s", r.Status, r.Raw)
		return
	}
	for k := range body {
		if k != "error" && k != "detail" {
			t.Errorf("error body has field %q: %s", k, r.Raw)
		}
	}
	var code, detail string
	if err := json.Unmarshal(body["error"], &code); err != nil || code == "" {
		t.Errorf("error body has no string error code: %s", r.Raw)
	}
	if raw, ok := body["detail"]; ok {
		if err := json.Unmarshal(raw, &detail); err != nil {
			t.Errorf("error detail is not a string: %s", r.Raw)
		}
	}
	low := strings.ToLower(publicID.ReplaceAllString(detail, "<id>"))
	for _, bad := range authForbidden {
		if strings.Contains(low, bad) {
			t.Errorf("error detail leaks %q: %s", bad, r.Raw)
		}
	}
	authCheckNoCORS(t, r)
}

// authCheckNoCORS asserts the answer carries no CORS header.
func authCheckNoCORS(t *testing.T, r *hubtest.Response) {
	t.Helper()
	for name := range r.Header {
		if strings.HasPrefix(strings.ToLower(name), "access-control-") {
			t.Errorf("answer %d carries CORS header %s: %v", r.Status, name, r.Header[name])
		}
	}
}

func TestAuthMissingOrMalformedHeader(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	cases := []struct {
		header string // "" means no Authorization header
		code   string
	}{
		{"", core.CodeMissingAPIKey},
		{"Basic x", core.CodeMissingAPIKey},
		{"Basic " + h.Key, core.CodeMissingAPIKey},
		{"Token " + h.Key, core.CodeMissingAPIKey},
		{"Bearer", core.CodeMissingAPIKey},
		{"Bearer ", core.CodeMissingAPIKey},
		{"bearer", core.CodeMissingAPIKey},
		{h.Key, core.CodeMissingAPIKey},
		{"Bearer svc_unknown", core.CodeInvalidAPIKey},
		{"Bearer svc_" + strings.Repeat("0", 43), core.CodeInvalidAPIKey},
		{"Bearer " + h.Key + "x", core.CodeInvalidAPIKey},
		{"Bearer " + strings.ToUpper(h.Key), core.CodeInvalidAPIKey},
		{"Bearer " + h.Key[:len(h.Key)-1], core.CodeInvalidAPIKey},
		{"Bearer " + strings.Repeat("k", 1000), core.CodeInvalidAPIKey},
	}
	for _, ep := range authEndpoints {
		for _, c := range cases {
			var hdr []string
			if c.header != "" {
				hdr = []string{"Authorization", c.header}
			}
			r := h.Call(ep.method, ep.path, "", ep.body, hdr...)
			if r.Status != 401 || r.Code() != c.code {
				t.Errorf("%s %s with Authorization %.30q: got %d %s, want 401 %s", ep.method, ep.path, c.header, r.Status, r.Raw, c.code)
			}
			authCheckErrorBody(t, r)
		}
	}
}

func TestAuthSchemeCaseInsensitive(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		r := h.Call("GET", "/v1/api/projects", "", nil, "Authorization", scheme+" "+h.Key)
		r.Expect(t, 200, "")
	}
	// Surrounding white space around the key is not part of it.
	h.Call("GET", "/v1/api/projects", "", nil, "Authorization", "Bearer  "+h.Key+" ").Expect(t, 200, "")
}

func TestAuthRevocationIsImmediate(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	k, secret, err := h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "svc_") || len(secret) != len("svc_")+43 {
		t.Fatalf("new key %q is not svc_ + 43 characters", secret)
	}
	// Warm up whatever could cache the key.
	for range 3 {
		h.Call("GET", "/v1/api/workspaces", secret, nil).Expect(t, 200, "")
	}
	if err := h.Service.Admin.RevokeAPIKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	for _, ep := range authEndpoints {
		authCheckErrorBody(t, h.Call(ep.method, ep.path, secret, ep.body).Expect(t, 401, core.CodeInvalidAPIKey))
	}
	// The account's other key is untouched; revoking twice is refused.
	h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "")
	if err := h.Service.Admin.RevokeAPIKey(ctx, k.ID); core.ErrorCode(err) != core.CodeNotFound {
		t.Fatalf("second revoke: %v, want %s", err, core.CodeNotFound)
	}
	// A key acts on its own account: a second key of the same account sees the same data.
	_, secret2, err := h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	r := h.Call("GET", "/v1/api/projects", secret2, nil).Expect(t, 200, "")
	if ps := r.Body["projects"].([]any); len(ps) != 1 || ps[0].(map[string]any)["projectId"] != h.Project.ID {
		t.Fatalf("second key sees %s", r.Raw)
	}
}

func TestAuthEntitlementRequired(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	_, key := h.NewAccount(false)
	var probes []authEndpoint
	for _, ep := range authEndpoints {
		probes = append(probes, ep)
		if ep.body != nil { // entitlement is checked before the body
			probes = append(probes, authEndpoint{ep.method, ep.path, []byte("{")})
		}
	}
	probes = append(probes,
		authEndpoint{"GET", "/v1/api/nope", nil},          // before routing
		authEndpoint{"PUT", "/v1/api/workspaces", nil},    // before 405
		authEndpoint{"DELETE", "/v1/api/webhooks", nil},   // not Delete webhook
		authEndpoint{"GET", "/v1/api/webhooks/wh_x", nil}, // not Delete webhook
	)
	for _, ep := range probes {
		r := h.Call(ep.method, ep.path, key, ep.body)
		authCheckErrorBody(t, r)
		if ep.method == "DELETE" && strings.HasPrefix(ep.path, "/v1/api/webhooks/") {
			if r.Status != 404 || r.Code() != core.CodeWebhookNotFound {
				t.Errorf("%s %s: got %d %s, want 404 %s", ep.method, ep.path, r.Status, r.Raw, core.CodeWebhookNotFound)
			}
			continue
		}
		if r.Status != 403 || r.Code() != core.CodeEntitlementRequired {
			t.Errorf("%s %s: got %d %s, want 403 %s", ep.method, ep.path, r.Status, r.Raw, core.CodeEntitlementRequired)
		}
	}

	// Losing the entitlement takes effect on the next request, and regaining it too.
	ctx := context.Background()
	no, yes := false, true
	h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "")
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{Entitled: &no}); err != nil {
		t.Fatal(err)
	}
	h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 403, core.CodeEntitlementRequired)
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{Entitled: &yes}); err != nil {
		t.Fatal(err)
	}
	h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "")
}

func TestAuthUnknownRoutes(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	for _, p := range []string{
		"/v1/api/nope",
		"/v1/api",
		"/v1/api/",
		"/v1/api/workspaces/ws_0000000000000000/nope",
		"/v1/api/workspaces/ws_0000000000000000/messages/msg_0000000000000000",
		"/v1/api/webhooks/wh_0000000000000000/attempts",
		"/v1/api/Workspaces",
		"/v1/api/projects/prj_0000000000000000",
	} {
		authCheckErrorBody(t, h.Call("GET", p, "", nil).Expect(t, 401, core.CodeMissingAPIKey))
		authCheckErrorBody(t, h.Call("GET", p, "svc_unknown", nil).Expect(t, 401, core.CodeInvalidAPIKey))
		authCheckErrorBody(t, h.Call("GET", p, h.Key, nil).Expect(t, 404, core.CodeNotFound))
		authCheckErrorBody(t, h.Call("POST", p, h.Key, map[string]any{}).Expect(t, 404, core.CodeNotFound))
	}
	// Outside /v1/api: not found without a key.
	authCheckErrorBody(t, h.Call("GET", "/nope", "", nil).Expect(t, 404, core.CodeNotFound))
	authCheckErrorBody(t, h.Call("GET", "/v1/nope", "", nil).Expect(t, 404, core.CodeNotFound))
}

func TestAuthWrongMethod(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	for _, c := range []struct{ method, path string }{
		{"PUT", "/v1/api/workspaces"},
		{"DELETE", "/v1/api/workspaces"},
		{"PATCH", "/v1/api/workspaces/ws_0000000000000000"},
		{"DELETE", "/v1/api/workspaces/ws_0000000000000000"},
		{"POST", "/v1/api/workspaces/ws_0000000000000000"},
		{"PUT", "/v1/api/workspaces/ws_0000000000000000/messages"},
		{"GET", "/v1/api/workspaces/ws_0000000000000000/attachments"},
		{"POST", "/v1/api/projects"},
		{"DELETE", "/v1/api/agents"},
		{"POST", "/v1/api/providers"},
		{"PUT", "/v1/api/webhooks"},
		{"DELETE", "/v1/api/webhooks"},
		{"GET", "/v1/api/webhooks/wh_0000000000000000"},
		{"POST", "/v1/api/webhooks/wh_0000000000000000"},
	} {
		authCheckErrorBody(t, h.Call(c.method, c.path, "", nil).Expect(t, 401, core.CodeMissingAPIKey))
		authCheckErrorBody(t, h.Call(c.method, c.path, h.Key, nil).Expect(t, 405, core.CodeMethodNotAllowed))
	}
}

func TestAuthNoCORS(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	origin := []string{"Origin", "https://evil.example"}
	preflight := append(origin, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type")
	for _, ep := range authEndpoints {
		for _, key := range []string{"", h.Key} {
			r := h.Call("OPTIONS", ep.path, key, nil, preflight...)
			if r.Status != 403 || r.Code() == "" {
				t.Errorf("OPTIONS %s: got %d %s, want 403 with an error body", ep.path, r.Status, r.Raw)
			}
			authCheckErrorBody(t, r)
		}
		// Plain requests with an Origin get no CORS headers either, success or error.
		authCheckNoCORS(t, h.Call(ep.method, ep.path, h.Key, ep.body, origin...))
		authCheckNoCORS(t, h.Call(ep.method, ep.path, "", ep.body, origin...))
	}
	r := h.Call("OPTIONS", "/v1/api/nope", "", nil, preflight...)
	if r.Status != 403 {
		t.Errorf("OPTIONS on an unknown route: got %d %s, want 403", r.Status, r.Raw)
	}
	authCheckErrorBody(t, r)
	authCheckNoCORS(t, h.Call("GET", "/healthz", "", nil, origin...))
	authCheckNoCORS(t, h.Call("OPTIONS", "/healthz", "", nil, preflight...))
}

func TestAuthErrorBodiesLeakNothing(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := "/v1/api/workspaces/ws_0000000000000000"
	probes := []authEndpoint{
		{"POST", "/v1/api/workspaces", []byte(`{"prompt":`)},
		{"POST", "/v1/api/workspaces", []byte(`[]`)},
		{"POST", "/v1/api/workspaces", map[string]any{"prompt": 5}},
		{"POST", "/v1/api/workspaces", map[string]any{"projectId": "prj_0000000000000000", "agent": "agent_1", "model": "m"}},
		{"POST", "/v1/api/workspaces", map[string]any{"projectId": "'; DROP TABLE workspaces; --", "agent": "agent_1", "model": "m"}},
		{"POST", "/v1/api/workspaces", map[string]any{"projectId": "\x00", "agent": "agent_1", "model": "m"}},
		{"POST", "/v1/api/workspaces", map[string]any{"projectId": "prj_000000000000000\x00", "agent": "agent_1", "model": "m"}},
		{"POST", "/v1/api/workspaces", map[string]any{"providerId": "nope", "agent": "agent_1", "model": "m"}}, // 503 by behaviour.md
		{"POST", "/v1/api/workspaces", map[string]any{"providerId": "\x00", "agent": "agent_1", "model": "m"}},
		{"POST", "/v1/api/workspaces", map[string]any{"agent": "agent_1", "model": "m\x00"}},
		{"POST", "/v1/api/workspaces", map[string]any{"branch": "a..b"}},
		{"GET", ws, nil},
		{"GET", "/v1/api/workspaces/%00", nil},
		{"GET", "/v1/api/workspaces/%ff%fe", nil},
		{"GET", "/v1/api/workspaces/" + strings.Repeat("w", 5000), nil},
		{"GET", ws + "/messages?afterSeq=-1", nil},
		{"GET", ws + "/messages?limit=abc", nil},
		{"POST", ws + "/messages", map[string]any{"text": "hi", "attachments": []string{"asset_0000000000000000"}}},
		{"POST", ws + "/messages", map[string]any{"text": "hi", "attachments": []string{"../../etc/passwd"}}},
		{"POST", ws + "/attachments", []byte("x")},
		{"POST", "/v1/api/webhooks", map[string]any{"url": "https://127.0.0.1"}},
		{"POST", "/v1/api/webhooks", map[string]any{"url": "https://hooks.example.com/\x00"}},
		{"POST", "/v1/api/webhooks", map[string]any{"url": "https://hooks.example.com/", "description": "a\x00b"}},
		{"DELETE", "/v1/api/webhooks/%00", nil},
		{"DELETE", "/v1/api/webhooks/'", nil},
	}
	for _, p := range probes {
		r := h.Call(p.method, p.path, h.Key, p.body)
		if r.Status < 400 {
			t.Errorf("%s %s: got %d, want an error", p.method, p.path, r.Status)
			continue
		}
		if r.Status == 500 {
			t.Errorf("%s %.60s: got %d %s, want the documented answer", p.method, p.path, r.Status, r.Raw)
		}
		authCheckErrorBody(t, r)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	for _, p := range []string{"/healthz", "/readyz"} {
		r := h.Call("GET", p, "", nil).Expect(t, 200, "")
		if r.Body["ok"] != true {
			t.Errorf("%s body = %s", p, r.Raw)
		}
		// A key, even a bad one, changes nothing.
		h.Call("GET", p, "svc_unknown", nil).Expect(t, 200, "")
	}
}

func TestListProjects(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, "")
	ps, ok := r.Body["projects"].([]any)
	if !ok || len(ps) != 1 {
		t.Fatalf("projects = %s, want the one ready project", r.Raw)
	}
	p := ps[0].(map[string]any)
	want := map[string]any{
		"projectId": h.Project.ID, "repository": h.Project.Repository, "displayName": h.Project.DisplayName,
		"defaultBranch": "main", "state": "ready",
	}
	if len(p) != len(want) {
		t.Errorf("project has fields %v, want exactly %v", p, want)
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("project %s = %v, want %v", k, p[k], v)
		}
	}
	// Another account sees none of them, as an empty array.
	_, other := h.NewAccount(true)
	r = h.Call("GET", "/v1/api/projects", other, nil).Expect(t, 200, "")
	if string(r.Raw) != `{"projects":[]}` {
		t.Fatalf("other account's projects = %s, want {\"projects\":[]}", r.Raw)
	}
}

// authAgentsOnPath lists the agent ids whose program this machine has on PATH.
func authAgentsOnPath() []string {
	var ids []string
	for _, id := range core.AgentIDs {
		if _, err := exec.LookPath(agents.Programs[id]); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func authAgents(t *testing.T, h *hubtest.Hub) []string {
	t.Helper()
	r := h.Call("GET", "/v1/api/agents", h.Key, nil).Expect(t, 200, "")
	raw, ok := r.Body["agents"].([]any)
	if !ok {
		t.Fatalf("agents is not an array: %s", r.Raw)
	}
	out := []string{}
	for _, a := range raw {
		out = append(out, a.(string))
	}
	return out
}

func TestListAgents(t *testing.T) {
	t.Parallel()
	onPath := authAgentsOnPath()

	bare := hubtest.Start(t)
	if got, want := authAgents(t, bare), append([]string{}, onPath...); !slices.Equal(got, want) {
		t.Errorf("agents with no commands = %v, want %v (programs on PATH)", got, want)
	}

	bound := hubtest.Start(t, hubtest.WithAgentCommands(map[string]string{
		"agent_3": "cat", "agent_1": "/bin/true", "agent_2": "   ", "agent_9": "cat",
	}))
	want := []string{}
	for _, id := range core.AgentIDs {
		if id == "agent_1" || id == "agent_3" || slices.Contains(onPath, id) {
			want = append(want, id)
		}
	}
	if got := authAgents(t, bound); !slices.Equal(got, want) {
		t.Errorf("agents = %v, want %v", got, want)
	}
}

func TestListProviders(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("GET", "/v1/api/providers", h.Key, nil).Expect(t, 200, "")
	if r.Body["entitled"] != true {
		t.Errorf("entitled = %v, want true", r.Body["entitled"])
	}
	ps, _ := r.Body["providers"].([]any)
	var local map[string]any
	for _, p := range ps {
		if m := p.(map[string]any); m["providerId"] == "local" {
			local = m
		}
	}
	if local == nil {
		t.Fatalf("no local provider in %s", r.Raw)
	}
	if local["billingSource"] != "service" {
		t.Errorf("local billingSource = %v, want service", local["billingSource"])
	}
	if s, _ := local["displayName"].(string); s == "" {
		t.Errorf("local provider has no displayName")
	}
	sizes, _ := local["sizes"].([]any)
	if len(sizes) == 0 {
		t.Fatalf("local provider has no sizes: %s", r.Raw)
	}
	for _, z := range sizes {
		m := z.(map[string]any)
		if s, _ := m["sizeId"].(string); s == "" {
			t.Errorf("size without sizeId: %v", m)
		}
		if s, _ := m["displayName"].(string); s == "" {
			t.Errorf("size without displayName: %v", m)
		}
		if m["vcpuCount"] != float64(runtime.NumCPU()) {
			t.Errorf("vcpuCount = %v, want %d", m["vcpuCount"], runtime.NumCPU())
		}
		if mem, ok := m["memoryMib"].(float64); !ok || mem < 0 || mem != float64(int64(mem)) {
			t.Errorf("memoryMib = %v, want a whole number of MiB", m["memoryMib"])
		}
	}
}

// A key's last use is stamped on the request path, at most once a minute, and shown
// to the operator; a key never used has none, and a refused key is not stamped.
func TestKeyLastUsed(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	lastUsed := func() map[string]*string {
		t.Helper()
		out := map[string]*string{}
		rows, err := h.PG().DB().Query(`SELECT name, last_used_at::text FROM api_keys WHERE account_id = $1`, h.Account.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var at *string
			if err := rows.Scan(&name, &at); err != nil {
				t.Fatal(err)
			}
			out[name] = at
		}
		return out
	}
	keys, err := h.Service.Admin.ListAPIKeys(ctx, h.Account.ID)
	if err != nil || len(keys) != 1 || keys[0].LastUsedAt != nil {
		t.Fatalf("expected one key never used, got %+v, %v", keys, err)
	}
	h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, "")
	first := lastUsed()
	keys, _ = h.Service.Admin.ListAPIKeys(ctx, h.Account.ID)
	if keys[0].LastUsedAt == nil || time.Since(*keys[0].LastUsedAt) > time.Minute {
		t.Fatalf("expected the key stamped as just used, got %+v", keys[0])
	}
	// Within the minute, more requests do not write again.
	for range 5 {
		h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, "")
	}
	if again := lastUsed(); *again[keys[0].Name] != *first[keys[0].Name] {
		t.Fatalf("expected no second stamp within a minute, got %s then %s", *first[keys[0].Name], *again[keys[0].Name])
	}
	// A stale stamp is renewed.
	if _, err := h.PG().DB().Exec(`UPDATE api_keys SET last_used_at = now() - interval '2 hours' WHERE account_id = $1`, h.Account.ID); err != nil {
		t.Fatal(err)
	}
	h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, "")
	keys, _ = h.Service.Admin.ListAPIKeys(ctx, h.Account.ID)
	if time.Since(*keys[0].LastUsedAt) > time.Minute {
		t.Fatalf("expected a stale stamp renewed, got %v", keys[0].LastUsedAt)
	}
	// A revoked key is refused and not stamped.
	if _, err := h.PG().DB().Exec(`UPDATE api_keys SET last_used_at = NULL, revoked_at = now() WHERE account_id = $1`, h.Account.ID); err != nil {
		t.Fatal(err)
	}
	h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 401, core.CodeInvalidAPIKey)
	if at := lastUsed()[keys[0].Name]; at != nil {
		t.Fatalf("expected a refused key left unstamped, got %s", *at)
	}
}
