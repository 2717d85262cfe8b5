package api_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// Tests of api.md 4.1-4.3 and 4.13 (create, list and get workspace, idempotency of
// create) through real HTTP against a real hub and database.

const workspacesPath = "/v1/api/workspaces"

var (
	generatedBranchRE = regexp.MustCompile(`^[a-z]+-[a-z]+-[0-9a-z]{6}$`)
	workspaceIDRE     = regexp.MustCompile(`^ws_[0-9A-Za-z]{16}$`)
)

// statusFields are the fields of the workspace status object (api.md 2.1).
var statusFields = []string{
	"workspaceId", "providerId", "projectId", "branch", "baseRef", "state", "statusCode", "startupPhase",
	"runtimeState", "agentStatus", "latestSeq", "lastTurn", "createdAt", "updatedAt",
}

// statusExtensions are the status object's extensions (x-wshub-extension in openapi.yaml).
var statusExtensions = []string{"statusDetail", "headCommit", "pushed", "origin", "title", "startedBy", "host"}

// withAgent returns body plus an agent and a model, so that the create does not depend
// on defaults taken from an earlier workspace. Fields of body win.
func withAgent(body map[string]any) map[string]any {
	out := map[string]any{"agent": "agent_1", "model": "model-a"}
	for k, v := range body {
		out[k] = v
	}
	return out
}

// bodyOf turns a nil map into no body at all (a nil map inside an interface would be
// sent as the JSON body null, which is not an object).
func bodyOf(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// workspaceOf returns the `workspace` object of a create or get answer.
func workspaceOf(t testing.TB, r *hubtest.Response) map[string]any {
	t.Helper()
	ws, ok := r.Body["workspace"].(map[string]any)
	if !ok || len(r.Body) != 1 {
		t.Fatalf("expected a body {workspace: {...}}, got %s", r.Raw)
	}
	return ws
}

func idOf(t testing.TB, ws map[string]any) string {
	t.Helper()
	id, _ := ws["workspaceId"].(string)
	if id == "" {
		t.Fatalf("expected a workspaceId, got %v", ws)
	}
	return id
}

// listIDs returns the workspace ids of List workspaces, in order.
func listIDs(t testing.TB, h *hubtest.Hub, key string) []string {
	t.Helper()
	r := h.Call("GET", workspacesPath, key, nil).Expect(t, 200, "")
	list, ok := r.Body["workspaces"].([]any)
	if !ok {
		t.Fatalf("expected {workspaces: [...]}, got %s", r.Raw)
	}
	ids := make([]string, len(list))
	for i, w := range list {
		ws, ok := w.(map[string]any)
		if !ok {
			t.Fatalf("expected workspace objects in the list, got %s", r.Raw)
		}
		ids[i] = idOf(t, ws)
	}
	return ids
}

// create creates a workspace with body and returns its status object.
func create(t testing.TB, h *hubtest.Hub, key string, body any, headers ...string) map[string]any {
	t.Helper()
	return workspaceOf(t, h.Call("POST", workspacesPath, key, body, headers...).Expect(t, 201, ""))
}

// checkStatusObject checks that every field of api.md 2.1 is present with its type and
// that enum fields hold allowed values.
func checkStatusObject(t testing.TB, ws map[string]any) {
	t.Helper()
	for k := range ws {
		if !slices.Contains(statusFields, k) && !slices.Contains(statusExtensions, k) {
			t.Errorf("expected only the fields of api.md 2.1 and the extensions, got extra field %q in %v", k, ws)
		}
	}
	for _, f := range []string{"workspaceId", "providerId", "projectId", "branch", "baseRef", "state", "startupPhase", "runtimeState", "agentStatus"} {
		if s, ok := ws[f].(string); !ok || s == "" {
			t.Errorf("expected %s to be a non-empty string, got %#v", f, ws[f])
		}
	}
	if _, ok := ws["statusCode"].(string); !ok {
		t.Errorf("expected statusCode to be a string, got %#v", ws["statusCode"])
	}
	for _, f := range []string{"latestSeq", "createdAt", "updatedAt"} {
		if n, ok := ws[f].(float64); !ok || n < 0 || n != math.Trunc(n) {
			t.Errorf("expected %s to be a non-negative integer number, got %#v", f, ws[f])
		}
	}
	if lt, ok := ws["lastTurn"]; ok {
		if _, isObj := lt.(map[string]any); !isObj {
			t.Errorf("expected lastTurn to be absent or an object, got %#v", lt)
		}
	}
	enums := map[string][]string{
		"state": {"queued", "provisioning", "setup", "ready", "pausing", "paused", "resuming", "archiving",
			"archived", "deleting", "deleted", "failed"},
		"startupPhase": {"allocating", "booting", "authenticating-runtime", "syncing-repository", "starting-agent",
			"running", "failed"},
		"runtimeState": {"offline", "connecting", "online"},
		"agentStatus":  {"working", "idle", "unknown"},
	}
	for f, allowed := range enums {
		if s, _ := ws[f].(string); !slices.Contains(allowed, s) {
			t.Errorf("expected %s to be one of %v, got %#v", f, allowed, ws[f])
		}
	}
	if id, _ := ws["workspaceId"].(string); !workspaceIDRE.MatchString(id) {
		t.Errorf("expected workspaceId to match %s, got %q", workspaceIDRE, id)
	}
	if c, u := ws["createdAt"].(float64), ws["updatedAt"].(float64); u < c {
		t.Errorf("expected updatedAt >= createdAt, got createdAt %v updatedAt %v", c, u)
	}
}

// newTenant makes another entitled account with a key and a ready project.
func newTenant(t testing.TB, h *hubtest.Hub) (*core.Account, string, *core.Project) {
	t.Helper()
	acct, key := h.NewAccount(true)
	return acct, key, h.NewProject(acct.ID, hubtest.GitRepo(t))
}

// stored reads a workspace row (for fields the wire does not show: agent, model, mode).
func stored(t testing.TB, h *hubtest.Hub, accountID, id string) *core.Workspace {
	t.Helper()
	ws, err := h.PG().GetWorkspace(context.Background(), accountID, id)
	if err != nil {
		t.Fatalf("read workspace %s: %v", id, err)
	}
	return ws
}

func TestCreateWorkspaceStatusObject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name            string
		body            map[string]any
		wantAgentStatus string
		wantLatestSeq   float64
	}{
		{"with prompt", withAgent(map[string]any{"prompt": "write the tests"}), "working", 1},
		{"without prompt", withAgent(nil), "unknown", 0},
		{"null prompt counts as absent", withAgent(map[string]any{"prompt": nil}), "unknown", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := hubtest.Start(t)
			before := time.Now().UnixMilli()
			r := h.Call("POST", workspacesPath, h.Key, tc.body).Expect(t, 201, "")
			after := time.Now().UnixMilli()
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("expected a JSON Content-Type, got %q", ct)
			}
			ws := workspaceOf(t, r)
			checkStatusObject(t, ws)
			want := map[string]any{
				"state": "queued", "startupPhase": "allocating", "runtimeState": "offline",
				"agentStatus": tc.wantAgentStatus, "latestSeq": tc.wantLatestSeq, "providerId": "local",
				"projectId": h.Project.ID, "baseRef": h.Project.DefaultBranch, "origin": "api",
			}
			if by, _ := ws["startedBy"].(map[string]any); by["kind"] != "api" || by["name"] != "test" {
				t.Errorf("expected the workspace started by the key, got %v", ws["startedBy"])
			}
			for f, v := range want {
				if ws[f] != v {
					t.Errorf("expected %s %#v, got %#v", f, v, ws[f])
				}
			}
			if h.Project.DefaultBranch != "main" {
				t.Errorf("expected the test project's default branch to be detected as main, got %q", h.Project.DefaultBranch)
			}
			if b, _ := ws["branch"].(string); !generatedBranchRE.MatchString(b) {
				t.Errorf("expected a generated branch matching %s, got %q", generatedBranchRE, b)
			}
			if _, ok := ws["lastTurn"]; ok {
				t.Errorf("expected no lastTurn on a new workspace, got %v", ws["lastTurn"])
			}
			for _, f := range []string{"createdAt", "updatedAt"} {
				if v := int64(ws[f].(float64)); v < before || v > after {
					t.Errorf("expected %s in [%d, %d] (epoch ms), got %d", f, before, after, v)
				}
			}
			id := idOf(t, ws)

			// Get and List show the same object.
			got := workspaceOf(t, h.Call("GET", workspacesPath+"/"+id, h.Key, nil).Expect(t, 200, ""))
			if !reflect.DeepEqual(got, ws) {
				t.Errorf("expected Get to equal the create answer\n  create: %v\n  get:    %v", ws, got)
			}
			l := h.Call("GET", workspacesPath, h.Key, nil).Expect(t, 200, "")
			list, _ := l.Body["workspaces"].([]any)
			if len(list) != 1 || !reflect.DeepEqual(list[0], ws) {
				t.Errorf("expected List to hold exactly the created workspace %v, got %s", ws, l.Raw)
			}

			// A prompt becomes user message seq 1.
			m := h.Call("GET", workspacesPath+"/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
			msgs, _ := m.Body["messages"].([]any)
			if len(msgs) != int(tc.wantLatestSeq) {
				t.Fatalf("expected %v messages, got %s", tc.wantLatestSeq, m.Raw)
			}
			if len(msgs) == 1 {
				msg := msgs[0].(map[string]any)
				if msg["text"] != "write the tests" || msg["seq"] != float64(1) || msg["role"] != "user" || msg["status"] != "pending" {
					t.Errorf("expected the prompt as pending user message seq 1, got %v", msg)
				}
			}

			row := stored(t, h, h.Account.ID, id)
			if row.RuntimeMode != "full-access" || row.Agent != "agent_1" || row.Model != "model-a" || row.Origin != "api" {
				t.Errorf("expected runtimeMode full-access, agent_1, model-a, origin api; got %q %q %q %q",
					row.RuntimeMode, row.Agent, row.Model, row.Origin)
			}
		})
	}
}

func TestCreateWorkspaceExplicitFields(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	body := map[string]any{
		"prompt": "  go  ", "projectId": h.Project.ID, "providerId": "local", "agent": "agent_3", "model": "big-model",
		"runtimeMode": "approval-required", "baseRef": "release/1.2#a_b-c", "branch": "feature/Login_2.0-x",
		"unknownField": map[string]any{"ignored": true},
	}
	ws := create(t, h, h.Key, body)
	checkStatusObject(t, ws)
	for f, v := range map[string]any{"branch": "feature/Login_2.0-x", "baseRef": "release/1.2#a_b-c", "providerId": "local", "projectId": h.Project.ID} {
		if ws[f] != v {
			t.Errorf("expected %s %q, got %#v", f, v, ws[f])
		}
	}
	row := stored(t, h, h.Account.ID, idOf(t, ws))
	if row.Agent != "agent_3" || row.Model != "big-model" || row.RuntimeMode != "approval-required" {
		t.Errorf("expected agent_3/big-model/approval-required, got %q/%q/%q", row.Agent, row.Model, row.RuntimeMode)
	}
	m := h.Call("GET", workspacesPath+"/"+idOf(t, ws)+"/messages", h.Key, nil).Expect(t, 200, "")
	if msgs, _ := m.Body["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["text"] != "go" {
		t.Errorf("expected the trimmed prompt \"go\" as the first message, got %s", m.Raw)
	}

	// Every runtime mode of api.md is accepted and stored.
	for _, mode := range core.RuntimeModes {
		ws := create(t, h, h.Key, withAgent(map[string]any{"runtimeMode": mode}))
		if got := stored(t, h, h.Account.ID, idOf(t, ws)).RuntimeMode; got != mode {
			t.Errorf("expected runtimeMode %q stored, got %q", mode, got)
		}
	}
	// Every agent id is accepted, even with no program configured for it.
	for _, agent := range []string{"agent_1", "agent_2", "agent_3", "agent_4"} {
		ws := create(t, h, h.Key, map[string]any{"agent": agent, "model": "m"})
		if got := stored(t, h, h.Account.ID, idOf(t, ws)).Agent; got != agent {
			t.Errorf("expected agent %q stored, got %q", agent, got)
		}
	}
}

func TestCreateWorkspaceEmptyBody(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	// With no earlier workspace there is nothing to take agent and model from.
	h.Call("POST", workspacesPath, h.Key, nil).Expect(t, 400, "agent_and_model_required")
	create(t, h, h.Key, withAgent(nil))
	bodies := []struct {
		name string
		body any
	}{
		{"no body", nil},
		{"zero-length body", ""},
		{"white space only", " \n\t "},
		{"empty object", "{}"},
		{"empty map", map[string]any{}},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			ws := create(t, h, h.Key, tc.body)
			checkStatusObject(t, ws)
			if ws["agentStatus"] != "unknown" || ws["latestSeq"] != float64(0) || ws["state"] != "queued" {
				t.Errorf("expected an idle queued workspace (unknown, latestSeq 0), got %v", ws)
			}
		})
	}
}

func TestCreateWorkspaceValidation(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	create(t, h, h.Key, withAgent(nil)) // agent and model defaults exist from here on

	rep := func(s string, n int) string { return strings.Repeat(s, n) }
	type tc struct {
		name   string
		body   any // string: sent raw
		status int
		code   string
	}
	cases := []tc{
		// Malformed JSON.
		{"truncated object", `{"prompt":`, 400, "invalid_json"},
		{"unquoted key", `{prompt: "x"}`, 400, "invalid_json"},
		{"trailing garbage", `{} x`, 400, "invalid_json"},
		{"two objects", `{}{}`, 400, "invalid_json"},
		{"single quotes", `{'prompt': 'x'}`, 400, "invalid_json"},
		{"trailing comma", `{"prompt": "x",}`, 400, "invalid_json"},
		// Not an object.
		{"array body", `[]`, 400, "invalid_request"},
		{"array of object", `[{"prompt":"x"}]`, 400, "invalid_request"},
		{"string body", `"hello"`, 400, "invalid_request"},
		{"number body", `42`, 400, "invalid_request"},
		{"null body", `null`, 400, "invalid_request"},
		{"boolean body", `true`, 400, "invalid_request"},
		// Fields of the wrong type.
		{"prompt number", map[string]any{"prompt": 1}, 400, "invalid_request"},
		{"prompt array", map[string]any{"prompt": []string{"x"}}, 400, "invalid_request"},
		{"projectId bool", map[string]any{"projectId": true}, 400, "invalid_request"},
		{"providerId array", map[string]any{"providerId": []any{}}, 400, "invalid_request"},
		{"agent object", map[string]any{"agent": map[string]any{}}, 400, "invalid_request"},
		{"model number", map[string]any{"model": 5}, 400, "invalid_request"},
		{"runtimeMode number", map[string]any{"runtimeMode": 1}, 400, "invalid_request"},
		{"baseRef bool", map[string]any{"baseRef": false}, 400, "invalid_request"},
		{"branch number", map[string]any{"branch": 3}, 400, "invalid_request"},
		{"idempotencyKey number", map[string]any{"idempotencyKey": 7}, 400, "invalid_request"},
		// Enum and length rules.
		{"agent unknown", map[string]any{"agent": "agent_5"}, 400, "invalid_request"},
		{"agent wrong case", map[string]any{"agent": "Agent_1"}, 400, "invalid_request"},
		{"agent empty", map[string]any{"agent": ""}, 400, "invalid_request"},
		{"agent made-up", map[string]any{"agent": "claude"}, 400, "invalid_request"},
		{"runtimeMode unknown", map[string]any{"runtimeMode": "turbo"}, 400, "invalid_request"},
		{"runtimeMode wrong case", map[string]any{"runtimeMode": "FULL-ACCESS"}, 400, "invalid_request"},
		{"runtimeMode empty", map[string]any{"runtimeMode": ""}, 400, "invalid_request"},
		{"model empty", map[string]any{"model": ""}, 400, "invalid_request"},
		{"model blank", map[string]any{"model": "   "}, 400, "invalid_request"},
		{"model 201 ascii", map[string]any{"model": rep("m", 201)}, 400, "invalid_request"},
		{"model 201 two-byte", map[string]any{"model": rep("é", 201)}, 400, "invalid_request"},
		{"model 200 ascii", map[string]any{"model": rep("m", 200)}, 201, ""},
		{"model 200 two-byte", map[string]any{"model": rep("é", 200)}, 201, ""},
		{"model 200 four-byte", map[string]any{"model": rep("😀", 200)}, 201, ""},
		{"model 1", map[string]any{"model": "x"}, 201, ""},
		{"unknown field ignored", map[string]any{"colour": "blue", "count": 3}, 201, ""},
		// Prompt.
		{"prompt empty", map[string]any{"prompt": ""}, 400, "invalid_prompt"},
		{"prompt blank", map[string]any{"prompt": " \n\t\r "}, 400, "invalid_prompt"},
		{"prompt NULs and blanks", map[string]any{"prompt": "\x00 \x00\n\x00"}, 400, "invalid_request"},
		{"branch HEAD", map[string]any{"branch": "HEAD"}, 400, "invalid_git_ref"},
		{"prompt 65537 ascii", map[string]any{"prompt": rep("a", 65537)}, 400, "invalid_prompt"},
		{"prompt 65537 two-byte", map[string]any{"prompt": rep("é", 65537)}, 400, "invalid_prompt"},
		{"prompt 65537 four-byte", map[string]any{"prompt": rep("😀", 65537)}, 400, "invalid_prompt"},
		{"prompt 65536 ascii", map[string]any{"prompt": rep("a", 65536)}, 201, ""},
		{"prompt 65536 two-byte", map[string]any{"prompt": rep("é", 65536)}, 201, ""},
		{"prompt 65536 four-byte", map[string]any{"prompt": rep("😀", 65536)}, 201, ""},
		{"prompt 65536 plus surrounding space", map[string]any{"prompt": "  \n" + rep("ü", 65536) + "\t "}, 201, ""},
		{"prompt one char", map[string]any{"prompt": "x"}, 201, ""},
		// Git refs: branch.
		{"branch space", map[string]any{"branch": "my branch"}, 400, "invalid_git_ref"},
		{"branch tilde", map[string]any{"branch": "a~1"}, 400, "invalid_git_ref"},
		{"branch caret", map[string]any{"branch": "a^b"}, 400, "invalid_git_ref"},
		{"branch colon", map[string]any{"branch": "a:b"}, 400, "invalid_git_ref"},
		{"branch question", map[string]any{"branch": "a?b"}, 400, "invalid_git_ref"},
		{"branch star", map[string]any{"branch": "a*b"}, 400, "invalid_git_ref"},
		{"branch bracket", map[string]any{"branch": "a[b"}, 400, "invalid_git_ref"},
		{"branch backslash", map[string]any{"branch": `a\b`}, 400, "invalid_git_ref"},
		{"branch at-brace", map[string]any{"branch": "a@{1}"}, 400, "invalid_git_ref"},
		{"branch non-ascii", map[string]any{"branch": "über"}, 400, "invalid_git_ref"},
		{"branch control char", map[string]any{"branch": "a\x01b"}, 400, "invalid_git_ref"},
		{"branch hash", map[string]any{"branch": "fix#12"}, 400, "invalid_git_ref"},
		{"branch double dot", map[string]any{"branch": "a..b"}, 400, "invalid_git_ref"},
		{"branch leading dash", map[string]any{"branch": "-feature"}, 400, "invalid_git_ref"},
		{"branch empty", map[string]any{"branch": ""}, 400, "invalid_git_ref"},
		{"branch blank", map[string]any{"branch": "   "}, 400, "invalid_git_ref"},
		{"branch .lock", map[string]any{"branch": "topic.lock"}, 400, "invalid_git_ref"},
		{"branch .lock component", map[string]any{"branch": "topic.lock/a"}, 400, "invalid_git_ref"},
		{"branch trailing slash", map[string]any{"branch": "topic/"}, 400, "invalid_git_ref"},
		{"branch double slash", map[string]any{"branch": "a//b"}, 400, "invalid_git_ref"},
		{"branch component dot", map[string]any{"branch": "a/.b"}, 400, "invalid_git_ref"},
		{"branch ok", map[string]any{"branch": "Feature/x_y.z-1"}, 201, ""},
		{"branch ok trimmed", map[string]any{"branch": "  trimmed-branch  "}, 201, ""},
		// Git refs: baseRef.
		{"baseRef space", map[string]any{"baseRef": "main branch"}, 400, "invalid_git_ref"},
		{"baseRef tilde", map[string]any{"baseRef": "main~1"}, 400, "invalid_git_ref"},
		{"baseRef caret", map[string]any{"baseRef": "HEAD^"}, 400, "invalid_git_ref"},
		{"baseRef colon", map[string]any{"baseRef": "a:b"}, 400, "invalid_git_ref"},
		{"baseRef double dot", map[string]any{"baseRef": "main..dev"}, 400, "invalid_git_ref"},
		{"baseRef leading dash", map[string]any{"baseRef": "-main"}, 400, "invalid_git_ref"},
		{"baseRef empty", map[string]any{"baseRef": ""}, 400, "invalid_git_ref"},
		{"baseRef non-ascii", map[string]any{"baseRef": "mäin"}, 400, "invalid_git_ref"},
		{"baseRef hash ok", map[string]any{"baseRef": "pr#12"}, 201, ""},
		{"baseRef tag ok", map[string]any{"baseRef": "v1.2.3"}, 201, ""},
		{"baseRef commit ok", map[string]any{"baseRef": "0123456789abcdef0123456789abcdef01234567"}, 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Call("POST", workspacesPath, h.Key, c.body)
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("expected %d %q, got %d %.300s", c.status, c.code, r.Status, r.Raw)
			}
			if c.status != 201 {
				if d, ok := r.Body["detail"].(string); ok && (strings.Contains(d, "SQL") || strings.Contains(d, "/tmp/")) {
					t.Errorf("expected a detail without internals, got %q", d)
				}
				return
			}
			ws := workspaceOf(t, r)
			checkStatusObject(t, ws)
			if m, ok := c.body.(map[string]any); ok {
				if b, ok := m["branch"].(string); ok && ws["branch"] != strings.TrimSpace(b) {
					t.Errorf("expected branch %q, got %v", strings.TrimSpace(b), ws["branch"])
				}
				if b, ok := m["baseRef"].(string); ok && ws["baseRef"] != b {
					t.Errorf("expected baseRef %q, got %v", b, ws["baseRef"])
				}
				if _, ok := m["prompt"]; ok && (ws["latestSeq"] != float64(1) || ws["agentStatus"] != "working") {
					t.Errorf("expected latestSeq 1 and working with a prompt, got %v", ws)
				}
			}
		})
	}
	// No rejected request stored anything: only the seed and the accepted cases exist.
	accepted := 1
	for _, c := range cases {
		if c.status == 201 {
			accepted++
		}
	}
	if ids := listIDs(t, h, h.Key); len(ids) != accepted {
		t.Errorf("expected %d workspaces (seed + accepted cases), got %d", accepted, len(ids))
	}
}

func TestCreateWorkspaceAgentAndModelDefaults(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	// A fresh account with a ready project but no workspace: agent and model needed.
	for _, body := range []map[string]any{nil, {}, {"agent": "agent_1"}, {"model": "m"}, {"prompt": "hi"}} {
		h.Call("POST", workspacesPath, h.Key, bodyOf(body)).Expect(t, 400, "agent_and_model_required")
	}
	if ids := listIDs(t, h, h.Key); len(ids) != 0 {
		t.Fatalf("expected no workspace after refused creates, got %v", ids)
	}
	// Another account's workspaces do not count as "the account's newest".
	other, otherKey, _ := newTenant(t, h)
	create(t, h, otherKey, map[string]any{"agent": "agent_4", "model": "theirs"})
	h.Call("POST", workspacesPath, h.Key, nil).Expect(t, 400, "agent_and_model_required")

	steps := []struct {
		name      string
		body      map[string]any
		wantAgent string
		wantModel string
	}{
		{"both given", map[string]any{"agent": "agent_1", "model": "m1"}, "agent_1", "m1"},
		{"both given again", map[string]any{"agent": "agent_2", "model": "m2"}, "agent_2", "m2"},
		{"both from newest", nil, "agent_2", "m2"},
		{"model given, agent from newest", map[string]any{"model": "m4"}, "agent_2", "m4"},
		{"agent given, model from newest", map[string]any{"agent": "agent_3"}, "agent_3", "m4"},
		{"both from newest after partial", map[string]any{"prompt": "go"}, "agent_3", "m4"},
	}
	for _, s := range steps {
		ws := create(t, h, h.Key, bodyOf(s.body))
		row := stored(t, h, h.Account.ID, idOf(t, ws))
		if row.Agent != s.wantAgent || row.Model != s.wantModel {
			t.Errorf("%s: expected agent %q model %q, got %q %q", s.name, s.wantAgent, s.wantModel, row.Agent, row.Model)
		}
		time.Sleep(2 * time.Millisecond) // sleep: the clock must move (distinct createdAt, so "newest" is unambiguous)
	}
	if got := stored(t, h, other.ID, listIDs(t, h, otherKey)[0]); got.Agent != "agent_4" || got.Model != "theirs" {
		t.Errorf("expected the other account's workspace unchanged, got %q %q", got.Agent, got.Model)
	}
}

func TestCreateWorkspaceProjectResolution(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()

	// Zero projects.
	noProj, noProjKey := h.NewAccount(true)
	_ = noProj
	h.Call("POST", workspacesPath, noProjKey, withAgent(nil)).Expect(t, 400, "cloud_project_required")

	// Two ready projects: the caller must name one.
	two, twoKey, p1 := newTenant(t, h)
	p2 := h.NewProject(two.ID, hubtest.GitRepo(t))
	h.Call("POST", workspacesPath, twoKey, withAgent(nil)).Expect(t, 400, "cloud_project_required")
	for _, p := range []*core.Project{p1, p2} {
		ws := create(t, h, twoKey, withAgent(map[string]any{"projectId": p.ID}))
		if ws["projectId"] != p.ID {
			t.Errorf("expected projectId %s, got %v", p.ID, ws["projectId"])
		}
	}
	// The projectId is trimmed like every text field.
	if ws := create(t, h, twoKey, withAgent(map[string]any{"projectId": " " + p2.ID + " "})); ws["projectId"] != p2.ID {
		t.Errorf("expected projectId %s, got %v", p2.ID, ws["projectId"])
	}

	// A project whose repository does not exist ends failed.
	failedAcct, failedKey := h.NewAccount(true)
	bad := h.NewProject(failedAcct.ID, "/nonexistent/repository/path")
	if p, err := h.PG().GetProject(ctx, failedAcct.ID, bad.ID); err != nil || p.State != core.ProjectFailed {
		t.Fatalf("expected the bogus project to be failed, got %+v %v", p, err)
	}
	pr := h.Call("GET", "/v1/api/projects", failedKey, nil).Expect(t, 200, "")
	if !strings.Contains(string(pr.Raw), `"state":"failed"`) {
		t.Errorf("expected List projects to show the failed project, got %s", pr.Raw)
	}
	// Ready + failed: more than one project exists, so one must be named (api.md 4.1).
	mixed, mixedKey, mixedReady := newTenant(t, h)
	mixedFailed := h.NewProject(mixed.ID, "/nonexistent/other")

	cases := []struct {
		name   string
		key    string
		body   map[string]any
		status int
		code   string
	}{
		{"unknown project id", h.Key, withAgent(map[string]any{"projectId": "proj_doesnotexist"}), 404, "cloud_project_not_found"},
		{"another account's project", h.Key, withAgent(map[string]any{"projectId": p1.ID}), 404, "cloud_project_not_found"},
		{"another account's failed project", h.Key, withAgent(map[string]any{"projectId": bad.ID}), 404, "cloud_project_not_found"},
		{"empty project id", h.Key, withAgent(map[string]any{"projectId": ""}), 400, "invalid_request"},
		{"failed project named", failedKey, withAgent(map[string]any{"projectId": bad.ID}), 409, "cloud_project_not_ready"},
		{"only project failed, none named", failedKey, withAgent(nil), 400, "cloud_project_required"},
		{"ready and failed, none named", mixedKey, withAgent(nil), 400, "cloud_project_required"},
		{"ready and failed, failed named", mixedKey, withAgent(map[string]any{"projectId": mixedFailed.ID}), 409, "cloud_project_not_ready"},
		{"ready and failed, ready named", mixedKey, withAgent(map[string]any{"projectId": mixedReady.ID}), 201, ""},
		{"own project named", h.Key, withAgent(map[string]any{"projectId": h.Project.ID}), 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Call("POST", workspacesPath, c.key, c.body)
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("expected %d %q, got %d %s", c.status, c.code, r.Status, r.Raw)
			}
		})
	}
	if ids := listIDs(t, h, failedKey); len(ids) != 0 {
		t.Errorf("expected no workspace on the account with the failed project, got %v", ids)
	}
}

func TestCreateWorkspaceBranchInUse(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	first := create(t, h, h.Key, withAgent(map[string]any{"branch": "feature/shared"}))
	holder := idOf(t, first)
	for _, branch := range []string{"feature/shared", "  feature/shared "} {
		h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"branch": branch})).
			Expect(t, 409, "cloud_branch_in_use:"+holder)
	}
	// A generated branch name is also "in use" for an explicit request.
	gen := create(t, h, h.Key, withAgent(nil))
	h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"branch": gen["branch"]})).
		Expect(t, 409, "cloud_branch_in_use:"+idOf(t, gen))
	// Branch names are case-sensitive in git.
	create(t, h, h.Key, withAgent(map[string]any{"branch": "Feature/Shared"}))
	// The same branch in another project of the account is free.
	p2 := h.NewProject(h.Account.ID, hubtest.GitRepo(t))
	other := create(t, h, h.Key, withAgent(map[string]any{"branch": "feature/shared", "projectId": p2.ID}))
	if other["projectId"] != p2.ID || other["branch"] != "feature/shared" {
		t.Errorf("expected feature/shared on project %s, got %v", p2.ID, other)
	}
	// Now two projects: the holder's project must be named for the next conflict.
	h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"branch": "feature/shared", "projectId": h.Project.ID})).
		Expect(t, 409, "cloud_branch_in_use:"+holder)
	// Another account's project is independent.
	_, key2, _ := newTenant(t, h)
	create(t, h, key2, withAgent(map[string]any{"branch": "feature/shared"}))
}

func TestCreateWorkspaceExistingRepositoryBranch(t *testing.T) {
	// A branch the repository already has is not in use by a workspace, but a workspace
	// cannot be created on it: 400 invalid_git_ref (409 is for live workspaces).
	t.Parallel()
	h := hubtest.Start(t)
	for _, branch := range []string{"main", " main "} {
		h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"branch": branch})).Expect(t, 400, "invalid_git_ref")
	}
	// Branch names are case-sensitive: "Main" is new.
	create(t, h, h.Key, withAgent(map[string]any{"branch": "Main"}))
	if ids := listIDs(t, h, h.Key); len(ids) != 1 {
		t.Errorf("expected only the Main workspace created, got %v", ids)
	}
}

func TestCreateWorkspaceBranchRace(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	const n = 10
	results := h.TryAll(t, n, "POST", workspacesPath, h.Key, withAgent(map[string]any{"branch": "race/one"}))
	var winner string
	for _, r := range results {
		if r.Status == 201 {
			if winner != "" {
				t.Fatalf("expected exactly one 201 for one branch, got a second: %v", r.Body)
			}
			winner, _ = r.Body["workspace"].(map[string]any)["workspaceId"].(string)
		}
	}
	if winner == "" {
		t.Fatalf("expected one 201, got none: %+v", results)
	}
	for _, r := range results {
		if r.Status != 201 && (r.Status != 409 || r.Code() != "cloud_branch_in_use:"+winner) {
			t.Errorf("expected 409 cloud_branch_in_use:%s for the losers, got %d %s", winner, r.Status, r.Raw)
		}
	}
	if ids := listIDs(t, h, h.Key); len(ids) != 1 || ids[0] != winner {
		t.Errorf("expected only %s listed, got %v", winner, ids)
	}
}

func TestCreateWorkspaceProvider(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	cases := []struct {
		name       string
		providerID any
		status     int
		code       string
	}{
		{"unknown provider", "aws-nowhere", 503, "cloud_provider_unavailable"},
		{"wrong case", "LOCAL", 503, "cloud_provider_unavailable"},
		{"empty provider", "", 400, "invalid_request"},
		{"provider number", 1, 400, "invalid_request"},
		{"local named", "local", 201, ""},
		{"local trimmed", " local ", 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"providerId": c.providerID}))
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("expected %d %q, got %d %s", c.status, c.code, r.Status, r.Raw)
			}
			if c.status == 201 {
				if ws := workspaceOf(t, r); ws["providerId"] != "local" {
					t.Errorf("expected providerId local, got %v", ws["providerId"])
				}
			}
		})
	}
}

func TestCreateWorkspaceBilling(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-time.Hour)
	future := time.Now().Add(30 * 24 * time.Hour)
	yes, no := true, false
	cases := []struct {
		name   string
		update core.AccountUpdate
		status int
		code   string
	}{
		{"billing hold", core.AccountUpdate{BillingHold: &yes}, 403, "cloud_billing_hold"},
		{"billing period over", core.AccountUpdate{Metered: &yes, BillingPeriodEnd: &past}, 403, "cloud_billing_period_missing"},
		{"billing period current", core.AccountUpdate{Metered: &yes, BillingPeriodEnd: &future}, 201, ""},
		{"metered, no billing period", core.AccountUpdate{Metered: &yes, ClearBillingPeriod: true}, 403, "cloud_billing_period_missing"},
		{"not metered, no billing period", core.AccountUpdate{Metered: &no, ClearBillingPeriod: true}, 201, ""},
		{"not metered, period over", core.AccountUpdate{Metered: &no, BillingPeriodEnd: &past}, 201, ""},
		{"hold lifted", core.AccountUpdate{BillingHold: &no}, 201, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := hubtest.Start(t)
			if _, err := h.Service.Admin.UpdateAccount(context.Background(), h.Account.ID, c.update); err != nil {
				t.Fatalf("update account: %v", err)
			}
			for i, body := range []map[string]any{withAgent(nil), withAgent(map[string]any{"prompt": "hi"})} {
				r := h.Call("POST", workspacesPath, h.Key, body, "Idempotency-Key", fmt.Sprintf("bill-%d", i))
				if r.Status != c.status || r.Code() != c.code {
					t.Fatalf("expected %d %q, got %d %s", c.status, c.code, r.Status, r.Raw)
				}
			}
			ids := listIDs(t, h, h.Key)
			if c.status == 403 && len(ids) != 0 {
				t.Errorf("expected nothing stored on a billing refusal, got %v", ids)
			}
			if c.status == 201 && len(ids) != 2 {
				t.Errorf("expected 2 workspaces, got %v", ids)
			}
		})
	}
}

func TestCreateWorkspaceBillingCheckOrder(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	holder := create(t, h, h.Key, withAgent(map[string]any{"branch": "held"}))
	bad := h.NewProject(h.Account.ID, "/nonexistent/billing/repo")
	yes := true
	past := time.Now().Add(-time.Minute)
	for _, upd := range []struct {
		name string
		u    core.AccountUpdate
		code string
	}{
		{"hold", core.AccountUpdate{BillingHold: &yes}, "cloud_billing_hold"},
		{"period missing", core.AccountUpdate{Metered: &yes, BillingPeriodEnd: &past}, "cloud_billing_period_missing"},
	} {
		t.Run(upd.name, func(t *testing.T) {
			// Reset, then apply this flag alone.
			no := false
			if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{BillingHold: &no, Metered: &no, ClearBillingPeriod: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, upd.u); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name   string
				key    string
				body   any
				hdr    []string
				status int
				code   string
			}{
				{"no key first", "", `{"prompt":`, nil, 401, "missing_api_key"},
				{"malformed JSON before billing", h.Key, `{"prompt":`, nil, 400, "invalid_json"},
				{"invalid prompt before billing", h.Key, map[string]any{"prompt": " "}, nil, 400, "invalid_prompt"},
				{"invalid git ref before billing", h.Key, withAgent(map[string]any{"branch": "a..b"}), nil, 400, "invalid_git_ref"},
				{"invalid idempotency key before billing", h.Key, withAgent(nil), []string{"Idempotency-Key", strings.Repeat("k", 201)}, 400, "invalid_idempotency_key"},
				{"unknown project before billing", h.Key, withAgent(map[string]any{"projectId": "proj_nope"}), nil, 404, "cloud_project_not_found"},
				{"project not ready before billing", h.Key, withAgent(map[string]any{"projectId": bad.ID}), nil, 409, "cloud_project_not_ready"},
				{"branch in use before billing", h.Key, withAgent(map[string]any{"projectId": h.Project.ID, "branch": "held"}), nil, 409, "cloud_branch_in_use:" + idOf(t, holder)},
				{"billing on a valid request", h.Key, withAgent(map[string]any{"projectId": h.Project.ID}), nil, 403, upd.code},
				{"billing before idempotent create", h.Key, withAgent(map[string]any{"projectId": h.Project.ID}), []string{"Idempotency-Key", "held-key"}, 403, upd.code},
			}
			for _, c := range cases {
				r := h.Call("POST", workspacesPath, c.key, c.body, c.hdr...)
				if r.Status != c.status || r.Code() != c.code {
					t.Errorf("%s: expected %d %q, got %d %s", c.name, c.status, c.code, r.Status, r.Raw)
				}
			}
			// Reading stays allowed under a billing refusal.
			if ids := listIDs(t, h, h.Key); len(ids) != 1 {
				t.Errorf("expected only the holder listed, got %v", ids)
			}
			h.Call("GET", workspacesPath+"/"+idOf(t, holder), h.Key, nil).Expect(t, 200, "")
		})
	}
	// A key refused for billing was not burned: once billing is fine it creates.
	no := false
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{BillingHold: &no, Metered: &no, ClearBillingPeriod: true}); err != nil {
		t.Fatal(err)
	}
	h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"projectId": h.Project.ID}), "Idempotency-Key", "held-key").Expect(t, 201, "")
}

func TestCreateWorkspaceWithoutContentKey(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithoutContentKey())
	h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"prompt": "secret plans"})).
		Expect(t, 503, "api_content_encryption_not_configured")
	h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"prompt": "secret plans"}), "Idempotency-Key", "k1").
		Expect(t, 503, "api_content_encryption_not_configured")
	if ids := listIDs(t, h, h.Key); len(ids) != 0 {
		t.Fatalf("expected nothing stored when the prompt cannot be sealed, got %v", ids)
	}
	// Validation still comes first.
	h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"prompt": ""})).Expect(t, 400, "invalid_prompt")
	// Without a prompt nothing needs sealing.
	ws := create(t, h, h.Key, withAgent(nil))
	checkStatusObject(t, ws)
	if ws["latestSeq"] != float64(0) || ws["agentStatus"] != "unknown" {
		t.Errorf("expected an idle workspace, got %v", ws)
	}
	// The same key with a prompt-less body is a new request: the refused one stored nothing.
	create(t, h, h.Key, withAgent(nil), "Idempotency-Key", "k1")
	got := workspaceOf(t, h.Call("GET", workspacesPath+"/"+idOf(t, ws), h.Key, nil).Expect(t, 200, ""))
	if !reflect.DeepEqual(got, ws) {
		t.Errorf("expected Get to equal the create answer, got %v vs %v", got, ws)
	}
	if ids := listIDs(t, h, h.Key); len(ids) != 2 {
		t.Errorf("expected 2 workspaces, got %v", ids)
	}
}

func TestCreateWorkspaceIdempotency(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	_, key2, _ := newTenant(t, h)
	rep := strings.Repeat
	type call struct {
		key     string // API key; "" means h.Key
		body    map[string]any
		headers []string
		status  int
		code    string
		sameAs  int // index of an earlier call whose workspaceId must match (-1: none)
		newID   bool
	}
	cases := []struct {
		name  string
		calls []call
	}{
		{"header key then replay", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "h-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "h-1"}, status: 200, sameAs: 0},
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "h-1"}, status: 200, sameAs: 0},
		}},
		{"body key then replay", []call{
			{body: withAgent(map[string]any{"idempotencyKey": "b-1"}), status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"idempotencyKey": "b-1"}), status: 200, sameAs: 0},
		}},
		{"header then body carry the same key", []call{
			{body: withAgent(map[string]any{"prompt": "x"}), headers: []string{"Idempotency-Key", "hb-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"prompt": "x", "idempotencyKey": "hb-1"}), status: 200, sameAs: 0},
		}},
		{"both equal", []call{
			{body: withAgent(map[string]any{"idempotencyKey": "both-1"}), headers: []string{"Idempotency-Key", "both-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"idempotencyKey": "both-1"}), headers: []string{"Idempotency-Key", "both-1"}, status: 200, sameAs: 0},
		}},
		{"both equal after trimming", []call{
			{body: withAgent(map[string]any{"idempotencyKey": "  trim-1 "}), headers: []string{"Idempotency-Key", "trim-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "trim-1"}, status: 200, sameAs: 0},
		}},
		{"both different", []call{
			{body: withAgent(map[string]any{"idempotencyKey": "x-1"}), headers: []string{"Idempotency-Key", "x-2"}, status: 400, code: "idempotency_key_mismatch", sameAs: -1},
		}},
		{"key 201 chars in header", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", rep("k", 201)}, status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key 201 chars in body", []call{
			{body: withAgent(map[string]any{"idempotencyKey": rep("é", 201)}), status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key empty in header", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", ""}, status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key empty in body", []call{
			{body: withAgent(map[string]any{"idempotencyKey": ""}), status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key white space in header", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "   "}, status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key white space in body", []call{
			{body: withAgent(map[string]any{"idempotencyKey": " \t\n "}), status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key with control character in body", []call{
			{body: withAgent(map[string]any{"idempotencyKey": "a\x01b"}), status: 400, code: "invalid_idempotency_key", sameAs: -1},
		}},
		{"key 200 chars in header", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", rep("h", 200)}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(nil), headers: []string{"Idempotency-Key", rep("h", 200)}, status: 200, sameAs: 0},
		}},
		{"key 200 multi-byte chars in body", []call{
			{body: withAgent(map[string]any{"idempotencyKey": rep("ü", 199) + "😀"}), status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"idempotencyKey": rep("ü", 199) + "😀"}), status: 200, sameAs: 0},
		}},
		{"same key different body", []call{
			{body: withAgent(map[string]any{"prompt": "one"}), headers: []string{"Idempotency-Key", "d-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"prompt": "two"}), headers: []string{"Idempotency-Key", "d-1"}, status: 409, code: "idempotency_key_reused_with_different_request", sameAs: -1},
			{body: withAgent(map[string]any{"prompt": "one", "branch": "other"}), headers: []string{"Idempotency-Key", "d-1"}, status: 409, code: "idempotency_key_reused_with_different_request", sameAs: -1},
			{body: map[string]any{"prompt": "one"}, headers: []string{"Idempotency-Key", "d-1"}, status: 409, code: "idempotency_key_reused_with_different_request", sameAs: -1},
			{body: withAgent(map[string]any{"prompt": "one"}), headers: []string{"Idempotency-Key", "d-1"}, status: 200, sameAs: 0},
		}},
		{"normalised body replays", []call{
			{body: withAgent(map[string]any{"prompt": "norm", "branch": "norm-b"}), headers: []string{"Idempotency-Key", "n-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"prompt": "  norm\n", "branch": " norm-b ", "ignored": 1}), headers: []string{"Idempotency-Key", "n-1"}, status: 200, sameAs: 0},
		}},
		{"keys are case-sensitive", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "Case-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "case-1"}, status: 201, sameAs: -1, newID: true},
		}},
		{"same key on another account is independent", []call{
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "shared"}, status: 201, sameAs: -1, newID: true},
			{key: key2, body: withAgent(nil), headers: []string{"Idempotency-Key", "shared"}, status: 201, sameAs: -1, newID: true},
			{key: key2, body: withAgent(map[string]any{"prompt": "different"}), headers: []string{"Idempotency-Key", "shared"}, status: 409, code: "idempotency_key_reused_with_different_request", sameAs: -1},
			{body: withAgent(nil), headers: []string{"Idempotency-Key", "shared"}, status: 200, sameAs: 0},
			{key: key2, body: withAgent(nil), headers: []string{"Idempotency-Key", "shared"}, status: 200, sameAs: 1},
		}},
		{"key of a refused request is not burned", []call{
			{body: withAgent(map[string]any{"projectId": "proj_missing"}), headers: []string{"Idempotency-Key", "r-1"}, status: 404, code: "cloud_project_not_found", sameAs: -1},
			{body: withAgent(map[string]any{"prompt": "fine"}), headers: []string{"Idempotency-Key", "r-1"}, status: 201, sameAs: -1, newID: true},
			{body: withAgent(map[string]any{"prompt": "fine"}), headers: []string{"Idempotency-Key", "r-1"}, status: 200, sameAs: 1},
		}},
	}
	seen := map[string]string{} // workspaceId -> case that created it
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ids := make([]string, len(tc.calls))
			for i, c := range tc.calls {
				key := c.key
				if key == "" {
					key = h.Key
				}
				r := h.Call("POST", workspacesPath, key, c.body, c.headers...)
				if r.Status != c.status || r.Code() != c.code {
					t.Fatalf("call %d: expected %d %q, got %d %.300s", i, c.status, c.code, r.Status, r.Raw)
				}
				if c.status != 200 && c.status != 201 {
					continue
				}
				ws := workspaceOf(t, r)
				checkStatusObject(t, ws)
				ids[i] = idOf(t, ws)
				if c.sameAs >= 0 && ids[i] != ids[c.sameAs] {
					t.Errorf("call %d: expected the replay to return %s, got %s", i, ids[c.sameAs], ids[i])
				}
				if c.newID {
					if prev, dup := seen[ids[i]]; dup {
						t.Errorf("call %d: expected a new workspace, got %s already created by %q", i, ids[i], prev)
					}
					seen[ids[i]] = tc.name
				}
			}
		})
	}
	// Replays created nothing: the accounts hold exactly the new ids.
	want := 0
	for _, tc := range cases {
		for _, c := range tc.calls {
			if c.newID && c.key == "" {
				want++
			}
		}
	}
	if ids := listIDs(t, h, h.Key); len(ids) != want {
		t.Errorf("expected %d workspaces after replays, got %d", want, len(ids))
	}
	if ids := listIDs(t, h, key2); len(ids) != 1 {
		t.Errorf("expected 1 workspace on the second account, got %v", ids)
	}
}

func TestCreateWorkspaceReplayShowsCurrentStatus(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	first := create(t, h, h.Key, withAgent(map[string]any{"prompt": "once"}), "Idempotency-Key", "cur")
	id := idOf(t, first)
	// A message sent afterwards moves latestSeq; the replay reports the current status
	// and does not append the prompt again.
	h.Call("POST", workspacesPath+"/"+id+"/messages", h.Key, map[string]any{"text": "more"}).Expect(t, 200, "")
	replay := workspaceOf(t, h.Call("POST", workspacesPath, h.Key, withAgent(map[string]any{"prompt": "once"}), "Idempotency-Key", "cur").Expect(t, 200, ""))
	if idOf(t, replay) != id || replay["latestSeq"] != float64(2) {
		t.Errorf("expected the replay to show %s with latestSeq 2, got %v", id, replay)
	}
	got := workspaceOf(t, h.Call("GET", workspacesPath+"/"+id, h.Key, nil).Expect(t, 200, ""))
	if !reflect.DeepEqual(got, replay) {
		t.Errorf("expected the replay to equal Get\n  replay: %v\n  get:    %v", replay, got)
	}
	m := h.Call("GET", workspacesPath+"/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	if msgs, _ := m.Body["messages"].([]any); len(msgs) != 2 {
		t.Errorf("expected 2 messages (prompt once + sent), got %s", m.Raw)
	}
}

func TestCreateWorkspaceIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	const n = 50
	results := h.TryAll(t, n, "POST", workspacesPath, h.Key, withAgent(map[string]any{"prompt": "only once"}),
		"Idempotency-Key", "one-key-for-all")
	counts := map[int]int{}
	ids := map[string]int{}
	for i, r := range results {
		counts[r.Status]++
		ws, _ := r.Body["workspace"].(map[string]any)
		id, _ := ws["workspaceId"].(string)
		if id == "" {
			t.Errorf("request %d: expected a workspace, got %d %s", i, r.Status, r.Raw)
			continue
		}
		ids[id]++
	}
	if counts[201] != 1 || counts[200] != n-1 {
		t.Errorf("expected exactly one 201 and %d x 200, got %v", n-1, counts)
	}
	if len(ids) != 1 {
		t.Errorf("expected every answer to carry the same workspaceId, got %v", ids)
	}
	list := listIDs(t, h, h.Key)
	if len(list) != 1 || ids[list[0]] != n {
		t.Errorf("expected List to show the one workspace %v, got %v", ids, list)
	}
	m := h.Call("GET", workspacesPath+"/"+list[0]+"/messages", h.Key, nil).Expect(t, 200, "")
	if msgs, _ := m.Body["messages"].([]any); len(msgs) != 1 {
		t.Errorf("expected the prompt stored once, got %s", m.Raw)
	}
}

func TestListAndGetWorkspaces(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()

	// A fresh account lists an empty array, not null.
	_, emptyKey := h.NewAccount(true)
	r := h.Call("GET", workspacesPath, emptyKey, nil).Expect(t, 200, "")
	if string(r.Raw) != `{"workspaces":[]}` {
		t.Errorf(`expected {"workspaces":[]}, got %s`, r.Raw)
	}

	// Account A: several workspaces, created in a known order.
	var created []map[string]any
	bodies := []map[string]any{
		withAgent(map[string]any{"prompt": "first"}),
		withAgent(nil),
		withAgent(map[string]any{"branch": "third"}),
		nil, // defaults from the newest
	}
	for _, b := range bodies {
		created = append(created, create(t, h, h.Key, bodyOf(b)))
		time.Sleep(3 * time.Millisecond) // sleep: the clock must move (distinct createdAt (ms), so the order is creation order)
	}
	p2 := h.NewProject(h.Account.ID, hubtest.GitRepo(t))
	created = append(created, create(t, h, h.Key, withAgent(map[string]any{"projectId": p2.ID})))

	// Account B: its own workspaces.
	acctB, keyB, _ := newTenant(t, h)
	wsB := create(t, h, keyB, withAgent(map[string]any{"prompt": "b's"}))
	idB := idOf(t, wsB)

	l := h.Call("GET", workspacesPath, h.Key, nil).Expect(t, 200, "")
	if len(l.Body) != 1 {
		t.Errorf("expected a body {workspaces: [...]}, got %s", l.Raw)
	}
	list, _ := l.Body["workspaces"].([]any)
	if len(list) != len(created) {
		t.Fatalf("expected %d workspaces for A, got %d: %s", len(created), len(list), l.Raw)
	}
	for i, w := range list {
		ws := w.(map[string]any)
		checkStatusObject(t, ws)
		if !reflect.DeepEqual(ws, created[i]) {
			t.Errorf("position %d: expected %v (creation order), got %v", i, created[i], ws)
		}
		if i > 0 {
			prev := list[i-1].(map[string]any)
			if prev["createdAt"].(float64) > ws["createdAt"].(float64) {
				t.Errorf("expected createdAt ascending, got %v before %v", prev["createdAt"], ws["createdAt"])
			}
		}
		got := workspaceOf(t, h.Call("GET", workspacesPath+"/"+idOf(t, ws), h.Key, nil).Expect(t, 200, ""))
		if !reflect.DeepEqual(got, ws) {
			t.Errorf("expected Get to equal the list entry\n  list: %v\n  get:  %v", ws, got)
		}
		if idOf(t, ws) == idB {
			t.Errorf("expected B's workspace %s not to be listed for A", idB)
		}
		// Tenant isolation: B cannot read A's workspace.
		h.Call("GET", workspacesPath+"/"+idOf(t, ws), keyB, nil).Expect(t, 404, "cloud_workspace_not_found")
	}
	if ids := listIDs(t, h, keyB); len(ids) != 1 || ids[0] != idB {
		t.Errorf("expected B to list only %s, got %v", idB, ids)
	}
	h.Call("GET", workspacesPath+"/"+idB, h.Key, nil).Expect(t, 404, "cloud_workspace_not_found")
	h.Call("GET", workspacesPath+"/"+idB, keyB, nil).Expect(t, 200, "")
	if ids := listIDs(t, h, emptyKey); len(ids) != 0 {
		t.Errorf("expected the empty account to list nothing, got %v", ids)
	}

	// Several keys of one account see the same workspaces.
	_, keyA2, err := h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	if a1, a2 := listIDs(t, h, h.Key), listIDs(t, h, keyA2); !slices.Equal(a1, a2) {
		t.Errorf("expected both keys of A to list the same workspaces, got %v and %v", a1, a2)
	}

	// Unknown ids.
	for _, id := range []string{"ws_0000000000000000", "ws_doesnotexist", "nothing-like-an-id", "msg_0000000000000000", "%20", acctB.ID} {
		h.Call("GET", workspacesPath+"/"+id, h.Key, nil).Expect(t, 404, "cloud_workspace_not_found")
	}
}

func TestWorkspacesCheckOrder(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	ws := create(t, h, h.Key, withAgent(nil))
	id := idOf(t, ws)

	notEntitled, notEntitledKey := h.NewAccount(false)
	h.NewProject(notEntitled.ID, hubtest.GitRepo(t))
	lost, lostKey, _ := newTenant(t, h)
	f := false
	if _, err := h.Service.Admin.UpdateAccount(ctx, lost.ID, core.AccountUpdate{Entitled: &f}); err != nil {
		t.Fatal(err)
	}
	revoked, revokedKey, err := h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "to revoke")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.RevokeAPIKey(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	badKey := "svc_" + strings.Repeat("A", 43)

	cases := []struct {
		name    string
		method  string
		path    string
		key     string
		body    any
		headers []string
		status  int
		code    string
	}{
		{"create no key, malformed body", "POST", workspacesPath, "", `{"prompt":`, nil, 401, "missing_api_key"},
		{"create no key, non-object body", "POST", workspacesPath, "", `[]`, nil, 401, "missing_api_key"},
		{"create no key, bad idempotency key", "POST", workspacesPath, "", `{}`, []string{"Idempotency-Key", strings.Repeat("x", 300)}, 401, "missing_api_key"},
		{"create wrong scheme", "POST", workspacesPath, "", `{"prompt":`, []string{"Authorization", "Basic " + h.Key}, 401, "missing_api_key"},
		{"create unknown key, malformed body", "POST", workspacesPath, badKey, `{"prompt":`, nil, 401, "invalid_api_key"},
		{"create revoked key, valid body", "POST", workspacesPath, revokedKey, withAgent(nil), nil, 401, "invalid_api_key"},
		{"create not entitled, malformed body", "POST", workspacesPath, notEntitledKey, `{"prompt":`, nil, 403, "cloud_entitlement_required"},
		{"create not entitled, bad agent", "POST", workspacesPath, notEntitledKey, map[string]any{"agent": "nope"}, nil, 403, "cloud_entitlement_required"},
		{"create not entitled, bad idempotency key", "POST", workspacesPath, notEntitledKey, withAgent(nil), []string{"Idempotency-Key", " "}, 403, "cloud_entitlement_required"},
		{"create not entitled, unknown project", "POST", workspacesPath, notEntitledKey, withAgent(map[string]any{"projectId": "proj_x"}), nil, 403, "cloud_entitlement_required"},
		{"create not entitled, valid body", "POST", workspacesPath, notEntitledKey, withAgent(nil), nil, 403, "cloud_entitlement_required"},
		{"create entitlement removed, valid body", "POST", workspacesPath, lostKey, withAgent(nil), nil, 403, "cloud_entitlement_required"},
		{"list no key", "GET", workspacesPath, "", nil, nil, 401, "missing_api_key"},
		{"list unknown key", "GET", workspacesPath, badKey, nil, nil, 401, "invalid_api_key"},
		{"list not entitled", "GET", workspacesPath, notEntitledKey, nil, nil, 403, "cloud_entitlement_required"},
		{"get no key", "GET", workspacesPath + "/" + id, "", nil, nil, 401, "missing_api_key"},
		{"get revoked key", "GET", workspacesPath + "/" + id, revokedKey, nil, nil, 401, "invalid_api_key"},
		{"get not entitled, unknown id", "GET", workspacesPath + "/ws_unknown", notEntitledKey, nil, nil, 403, "cloud_entitlement_required"},
		{"get entitlement removed", "GET", workspacesPath + "/" + id, lostKey, nil, nil, 403, "cloud_entitlement_required"},
		{"wrong method on the collection", "DELETE", workspacesPath, h.Key, nil, nil, 405, "method_not_allowed"},
		{"wrong method on a workspace", "POST", workspacesPath + "/" + id, h.Key, `{}`, nil, 405, "method_not_allowed"},
		{"wrong method without key", "DELETE", workspacesPath, "", nil, nil, 401, "missing_api_key"},
		{"scheme is case-insensitive", "GET", workspacesPath, "", nil, []string{"Authorization", "bEaReR " + h.Key}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.Call(c.method, c.path, c.key, c.body, c.headers...)
			if r.Status != c.status || r.Code() != c.code {
				t.Fatalf("expected %d %q, got %d %s", c.status, c.code, r.Status, r.Raw)
			}
			if c.status >= 400 {
				if _, ok := r.Body["detail"].(string); !ok && r.Body["detail"] != nil {
					t.Errorf("expected detail to be a string when present, got %#v", r.Body["detail"])
				}
			}
		})
	}
	// Nothing was created by the refused requests.
	if ids := listIDs(t, h, h.Key); len(ids) != 1 || ids[0] != id {
		t.Errorf("expected only %s on the account, got %v", id, ids)
	}
}

// A workspace's title (an extension) is the first line with words of its first prompt,
// spaces folded and cut to 80 characters; a workspace created without one takes it from
// its first message, and later messages do not change it. Lists carry it too.
func TestAWorkspacesTitleIsTheFirstLineOfItsFirstPrompt(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := create(t, h, h.Key, withAgent(map[string]any{"prompt": "\n  Fix the \t login   bug\nthe details follow"}))
	if ws["title"] != "Fix the login bug" {
		t.Errorf("expected the prompt's first line as the title, got %#v", ws["title"])
	}
	long := strings.Repeat("word ", 30)
	if got := create(t, h, h.Key, withAgent(map[string]any{"prompt": long}))["title"]; got != strings.TrimSpace(long[:80])+"…" &&
		got != long[:80]+"…" {
		t.Errorf("expected a long first line cut to 80 characters, got %#v", got)
	}
	bare := create(t, h, h.Key, withAgent(nil))
	if _, ok := bare["title"]; ok {
		t.Errorf("expected no title before the first message, got %#v", bare["title"])
	}
	id := idOf(t, bare)
	for _, text := range []string{"Rename the module\nand its imports", "then something else"} {
		h.Call("POST", workspacesPath+"/"+id+"/messages", h.Key, map[string]any{"text": text}).Expect(t, 200, "")
	}
	if got := workspaceOf(t, h.Call("GET", workspacesPath+"/"+id, h.Key, nil).Expect(t, 200, ""))["title"]; got != "Rename the module" {
		t.Errorf("expected the first message's first line as the title, kept after the second, got %#v", got)
	}
	titles := map[string]any{}
	for _, w := range h.Call("GET", workspacesPath, h.Key, nil).Expect(t, 200, "").Body["workspaces"].([]any) {
		titles[w.(map[string]any)["workspaceId"].(string)] = w.(map[string]any)["title"]
	}
	if titles[idOf(t, ws)] != "Fix the login bug" || titles[id] != "Rename the module" {
		t.Errorf("expected the list to carry the titles, got %v", titles)
	}
}
