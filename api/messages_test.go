package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// Helpers of this file and attachments_test.go carry a msgs/att prefix: other test files
// of the package are written alongside and must not collide.

// msgsTry is hubtest's Try (safe on goroutines that are not the test's).
func msgsTry(h *hubtest.Hub, method, path, key string, body any, headers ...string) (*hubtest.Response, error) {
	return h.Try(method, path, key, body, headers...)
}

// msgsCall is msgsTry failing t (a subtest may use it; hubtest's Call fails the hub's t).
func msgsCall(t testing.TB, h *hubtest.Hub, method, path, key string, body any, headers ...string) *hubtest.Response {
	t.Helper()
	r, err := msgsTry(h, method, path, key, body, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// msgsWorkspace creates a workspace through the API, with a first prompt unless prompt
// is empty, and returns its id.
func msgsWorkspace(t testing.TB, h *hubtest.Hub, key, prompt string) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "m"}
	if prompt != "" {
		body["prompt"] = prompt
	}
	r := msgsCall(t, h, "POST", "/v1/api/workspaces", key, body).Expect(t, 201, "")
	id, _ := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	if id == "" {
		t.Fatalf("expected a workspaceId in the create answer, got %s", r.Raw)
	}
	return id
}

// msgsSQL runs a setup statement on the hub's database.
func msgsSQL(t testing.TB, h *hubtest.Hub, query string, args ...any) {
	t.Helper()
	res, err := h.PG().DB().Exec(query, args...)
	if err != nil {
		t.Fatalf("setup SQL %q: %v", query, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("setup SQL %q: expected 1 row changed, got %d", query, n)
	}
}

// msgsSetState moves a workspace to state directly in the database (test setup).
func msgsSetState(t testing.TB, h *hubtest.Hub, wsID, state string) {
	t.Helper()
	msgsSQL(t, h, `UPDATE workspaces SET state = $1 WHERE id = $2`, state, wsID)
}

// msgsCount counts the stored messages of a workspace.
func msgsCount(t testing.TB, h *hubtest.Hub, wsID string) int {
	t.Helper()
	var n int
	if err := h.PG().DB().Get(&n, `SELECT count(*) FROM messages WHERE workspace_id = $1`, wsID); err != nil {
		t.Fatalf("count messages: %v", err)
	}
	return n
}

func msgsPath(wsID string) string { return "/v1/api/workspaces/" + wsID + "/messages" }

// msgsList lists one page with the raw query string q.
func msgsList(t testing.TB, h *hubtest.Hub, key, wsID, q string) (msgs []map[string]any, body map[string]any) {
	t.Helper()
	p := msgsPath(wsID)
	if q != "" {
		p += "?" + q
	}
	r := msgsCall(t, h, "GET", p, key, nil).Expect(t, 200, "")
	raw, ok := r.Body["messages"].([]any)
	if !ok {
		t.Fatalf("expected a messages array, got %s", r.Raw)
	}
	for _, m := range raw {
		msgs = append(msgs, m.(map[string]any))
	}
	return msgs, r.Body
}

func msgsKeys(m map[string]any) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// msgsReceipt checks the receipt shape and returns it.
func msgsReceipt(t testing.TB, r *hubtest.Response) (id string, seq float64, status string, resumed bool) {
	t.Helper()
	r.Expect(t, 200, "")
	if got := msgsKeys(r.Body); !slices.Equal(got, []string{"messageId", "resumeTriggered", "seq", "status"}) {
		t.Fatalf("expected receipt fields [messageId resumeTriggered seq status], got %v in %s", got, r.Raw)
	}
	id, _ = r.Body["messageId"].(string)
	seq, _ = r.Body["seq"].(float64)
	status, _ = r.Body["status"].(string)
	var ok bool
	if resumed, ok = r.Body["resumeTriggered"].(bool); !ok {
		t.Fatalf("expected resumeTriggered to be a boolean, got %s", r.Raw)
	}
	if !core.ValidID(id, core.PrefixMessage) {
		t.Fatalf("expected messageId msg_ + 16 base62, got %q", id)
	}
	return id, seq, status, resumed
}

func TestSendMessageReceipt(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)

	t.Run("after the prompt", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "first")
		var ids []string
		for i, want := range []float64{2, 3, 4} {
			id, seq, status, resumed := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": fmt.Sprintf("m%d", i)}))
			if seq != want || status != "queued" || resumed {
				t.Fatalf("expected seq %v queued resumeTriggered false, got seq %v %s %v", want, seq, status, resumed)
			}
			if slices.Contains(ids, id) {
				t.Fatalf("expected a new messageId, got %s again", id)
			}
			ids = append(ids, id)
		}
		g := msgsCall(t, h, "GET", "/v1/api/workspaces/"+ws, h.Key, nil).Expect(t, 200, "")
		w := g.Body["workspace"].(map[string]any)
		if w["latestSeq"] != float64(4) || w["agentStatus"] != "working" || w["state"] != "queued" {
			t.Fatalf("expected latestSeq 4, agentStatus working, state queued, got %s", g.Raw)
		}
		msgs, _ := msgsList(t, h, h.Key, ws, "")
		if len(msgs) != 4 || msgs[0]["text"] != "first" {
			t.Fatalf("expected the prompt and 3 messages, got %v", msgs)
		}
		for i, m := range msgs[1:] {
			if m["messageId"] != ids[i] || m["text"] != fmt.Sprintf("m%d", i) {
				t.Fatalf("expected message %d to be %s m%d, got %v", i+2, ids[i], i, m)
			}
		}
	})

	t.Run("first message of an idle workspace is seq 1", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		_, seq, _, _ := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "hello"}))
		if seq != 1 {
			t.Fatalf("expected seq 1, got %v", seq)
		}
	})

	t.Run("text is trimmed and unknown fields ignored", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": " \n\t hello  world \u00a0\n", "extra": []int{1}}))
		msgs, _ := msgsList(t, h, h.Key, ws, "")
		if len(msgs) != 1 || msgs[0]["text"] != "hello  world" {
			t.Fatalf("expected text %q, got %v", "hello  world", msgs)
		}
	})

	t.Run("text limit counts code points after trimming", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		for _, text := range []string{
			strings.Repeat("a", core.MaxTextChars),
			"  \n" + strings.Repeat("é", core.MaxTextChars) + " \t",
			strings.Repeat("\U0001F600", core.MaxTextChars),
		} {
			msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": text}))
		}
		msgs, _ := msgsList(t, h, h.Key, ws, "")
		if len(msgs) != 3 || msgs[1]["text"] != strings.Repeat("é", core.MaxTextChars) {
			t.Fatalf("expected 3 stored messages, the second trimmed to 65,536 é, got %d", len(msgs))
		}
	})
}

func TestSendMessageValidation(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := msgsWorkspace(t, h, h.Key, "prompt")
	asset := func(c byte) string { return "asset_" + strings.Repeat(string(c), 16) }
	nine := []string{}
	for _, c := range []byte("ABCDEFGHI") {
		nine = append(nine, asset(c))
	}
	long := strings.Repeat("k", core.MaxIdempotencyKeyChars+1)

	cases := []struct {
		name    string
		body    any
		headers []string
		code    string
	}{
		{"empty body", []byte{}, nil, "invalid_json"},
		{"white space body", []byte(" \n "), nil, "invalid_json"},
		{"truncated JSON", []byte(`{"text":"a"`), nil, "invalid_json"},
		{"trailing garbage", []byte(`{"text":"a"} x`), nil, "invalid_json"},
		{"not JSON", []byte(`text=a`), nil, "invalid_json"},
		{"gzip encoded", []byte("\x1f\x8b\x08\x00garbage"), []string{"Content-Encoding", "gzip"}, "invalid_json"},
		{"null", []byte(`null`), nil, "invalid_request"},
		{"array", []byte(`[{"text":"a"}]`), nil, "invalid_request"},
		{"string", []byte(`"a"`), nil, "invalid_request"},
		{"number", []byte(`42`), nil, "invalid_request"},
		{"text missing", map[string]any{}, nil, "invalid_request"},
		{"text missing with attachments", map[string]any{"attachments": []string{asset('A')}}, nil, "invalid_request"},
		{"text null", []byte(`{"text":null}`), nil, "invalid_request"},
		{"text number", []byte(`{"text":5}`), nil, "invalid_request"},
		{"text bool", []byte(`{"text":true}`), nil, "invalid_request"},
		{"text array", []byte(`{"text":["a"]}`), nil, "invalid_request"},
		{"text object", []byte(`{"text":{"a":1}}`), nil, "invalid_request"},
		{"attachments string", map[string]any{"text": "a", "attachments": asset('A')}, nil, "invalid_request"},
		{"attachments object", []byte(`{"text":"a","attachments":{"a":1}}`), nil, "invalid_request"},
		{"attachments numbers", []byte(`{"text":"a","attachments":[1,2]}`), nil, "invalid_request"},
		{"attachments nested", []byte(`{"text":"a","attachments":[["asset_AAAAAAAAAAAAAAAA"]]}`), nil, "invalid_request"},
		{"attachments null element", []byte(`{"text":"a","attachments":[null]}`), nil, "invalid_request"},
		{"idempotencyKey number", []byte(`{"text":"a","idempotencyKey":7}`), nil, "invalid_request"},
		{"text too long", map[string]any{"text": strings.Repeat("a", core.MaxTextChars+1)}, nil, "invalid_message"},
		{"text too long multibyte", map[string]any{"text": strings.Repeat("é", core.MaxTextChars+1)}, nil, "invalid_message"},
		{"text too long astral", map[string]any{"text": strings.Repeat("\U0001F600", core.MaxTextChars+1)}, nil, "invalid_message"},
		{"empty text", map[string]any{"text": ""}, nil, "invalid_message"},
		{"white space text", map[string]any{"text": " \n\t "}, nil, "invalid_message"},
		{"NUL and white space text", map[string]any{"text": "\x00 \n\x00"}, nil, "invalid_request"},
		{"empty text, empty attachments", map[string]any{"text": "", "attachments": []string{}}, nil, "invalid_message"},
		{"empty text, null attachments", []byte(`{"text":"","attachments":null}`), nil, "invalid_message"},
		{"nine distinct attachments", map[string]any{"text": "a", "attachments": nine}, nil, "invalid_message"},
		{"malformed asset id", map[string]any{"text": "a", "attachments": []string{"nope"}}, nil, "invalid_asset_id"},
		{"empty asset id", map[string]any{"text": "a", "attachments": []string{""}}, nil, "invalid_asset_id"},
		{"asset id prefix only", map[string]any{"text": "a", "attachments": []string{"asset_"}}, nil, "invalid_asset_id"},
		{"asset id too short", map[string]any{"text": "a", "attachments": []string{"asset_AAAAAAAAAAAAAAA"}}, nil, "invalid_asset_id"},
		{"asset id too long", map[string]any{"text": "a", "attachments": []string{"asset_AAAAAAAAAAAAAAAAA"}}, nil, "invalid_asset_id"},
		{"asset id bad character", map[string]any{"text": "a", "attachments": []string{"asset_AAAAAAAAAAAAAAA-"}}, nil, "invalid_asset_id"},
		{"asset id wrong prefix", map[string]any{"text": "a", "attachments": []string{"msg_AAAAAAAAAAAAAAAA"}}, nil, "invalid_asset_id"},
		{"asset id upper-case prefix", map[string]any{"text": "a", "attachments": []string{"ASSET_AAAAAAAAAAAAAAAA"}}, nil, "invalid_asset_id"},
		{"one malformed among valid", map[string]any{"text": "a", "attachments": []string{asset('A'), "../x"}}, nil, "invalid_asset_id"},
		{"header key too long", map[string]any{"text": "a"}, []string{"Idempotency-Key", long}, "invalid_idempotency_key"},
		{"header key multibyte too long", map[string]any{"text": "a"}, []string{"Idempotency-Key", strings.Repeat("é", 201)}, "invalid_idempotency_key"},
		{"header key blank", map[string]any{"text": "a"}, []string{"Idempotency-Key", "   "}, "invalid_idempotency_key"},
		{"body key too long", map[string]any{"text": "a", "idempotencyKey": long}, nil, "invalid_idempotency_key"},
		{"body key empty", map[string]any{"text": "a", "idempotencyKey": ""}, nil, "invalid_idempotency_key"},
		{"body key control character", map[string]any{"text": "a", "idempotencyKey": "a\u0001b"}, nil, "invalid_idempotency_key"},
		{"header and body keys differ", map[string]any{"text": "a", "idempotencyKey": "one"}, []string{"Idempotency-Key", "two"}, "idempotency_key_mismatch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := msgsCall(t, h, "POST", msgsPath(ws), h.Key, tc.body, tc.headers...)
			if r.Status != 400 || r.Code() != tc.code {
				t.Fatalf("expected 400 %s, got %d %.300s", tc.code, r.Status, r.Raw)
			}
			if d, _ := r.Body["detail"].(string); d == "" {
				t.Fatalf("expected a detail sentence, got %.300s", r.Raw)
			}
		})
	}
	t.Cleanup(func() {
		if n := msgsCount(t, h, ws); n != 1 {
			t.Errorf("expected no message stored by rejected sends (1 with the prompt), got %d", n)
		}
	})
}

func TestSendMessageNotFound(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	mine := msgsWorkspace(t, h, h.Key, "")
	deleted := msgsWorkspace(t, h, h.Key, "")
	msgsSetState(t, h, deleted, "deleted")
	otherAcct, otherKey := h.NewAccount(true)
	h.NewProject(otherAcct.ID, hubtest.GitRepo(t))
	theirs := msgsWorkspace(t, h, otherKey, "")

	cases := []struct {
		name, key, ws string
		body          any
		status        int
		code          string
	}{
		{"unknown id", h.Key, "ws_0000000000000000", map[string]any{"text": "a"}, 404, "cloud_workspace_not_found"},
		{"malformed id", h.Key, "nope", map[string]any{"text": "a"}, 404, "cloud_workspace_not_found"},
		{"other account's workspace", h.Key, theirs, map[string]any{"text": "a"}, 404, "cloud_workspace_not_found"},
		{"other account asks for mine", otherKey, mine, map[string]any{"text": "a"}, 404, "cloud_workspace_not_found"},
		{"deleted workspace", h.Key, deleted, map[string]any{"text": "a"}, 404, "cloud_workspace_not_found"},
		{"validation before lookup", h.Key, "ws_0000000000000000", map[string]any{"text": ""}, 400, "invalid_message"},
		{"no key before everything", "", "ws_0000000000000000", []byte(`{`), 401, "missing_api_key"},
		{"unknown key", "svc_unknown", mine, map[string]any{"text": "a"}, 401, "invalid_api_key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := msgsCall(t, h, "POST", msgsPath(tc.ws), tc.key, tc.body)
			if r.Status != tc.status || r.Code() != tc.code {
				t.Fatalf("expected %d %s, got %d %s", tc.status, tc.code, r.Status, r.Raw)
			}
		})
	}
	t.Cleanup(func() {
		for _, ws := range []string{mine, deleted, theirs} {
			if n := msgsCount(t, h, ws); n != 0 {
				t.Errorf("expected no message stored in %s, got %d", ws, n)
			}
		}
	})
}

func TestSendMessageWorkspaceStates(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	cases := []struct {
		state     string
		status    int
		code      string
		resumed   bool
		nextState string // state reported by Get workspace afterwards
	}{
		{"queued", 200, "", false, "queued"},
		{"provisioning", 200, "", false, "provisioning"},
		{"setup", 200, "", false, "setup"},
		{"ready", 200, "", false, "ready"},
		{"pausing", 200, "", false, "pausing"},
		{"paused", 200, "", true, "resuming"},
		{"resuming", 200, "", false, "resuming"},
		{"archiving", 409, "workspace_not_accepting_messages", false, "archiving"},
		{"archived", 409, "workspace_not_accepting_messages", false, "archived"},
		{"deleting", 409, "workspace_not_accepting_messages", false, "deleting"},
		{"failed", 409, "workspace_not_accepting_messages", false, "failed"},
		{"deleted", 404, "cloud_workspace_not_found", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.state, func(t *testing.T) {
			t.Parallel()
			ws := msgsWorkspace(t, h, h.Key, "prompt")
			msgsSetState(t, h, ws, tc.state)
			r := msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "hi"})
			if r.Status != tc.status || r.Code() != tc.code {
				t.Fatalf("expected %d %s, got %d %s", tc.status, tc.code, r.Status, r.Raw)
			}
			wantCount := 1
			if tc.status == 200 {
				_, seq, status, resumed := msgsReceipt(t, r)
				if seq != 2 || status != "queued" || resumed != tc.resumed {
					t.Fatalf("expected seq 2 queued resumeTriggered %v, got seq %v %s %v", tc.resumed, seq, status, resumed)
				}
				wantCount = 2
			}
			if n := msgsCount(t, h, ws); n != wantCount {
				t.Fatalf("expected %d stored messages, got %d", wantCount, n)
			}
			if tc.nextState == "" {
				return
			}
			g := msgsCall(t, h, "GET", "/v1/api/workspaces/"+ws, h.Key, nil).Expect(t, 200, "")
			if got := g.Body["workspace"].(map[string]any)["state"]; got != tc.nextState {
				t.Fatalf("expected state %s after the send, got %v", tc.nextState, got)
			}
			if tc.resumed {
				// The workspace is resuming now: the next message does not trigger a resume.
				_, seq, _, resumed := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "again"}))
				if seq != 3 || resumed {
					t.Fatalf("expected seq 3 with resumeTriggered false, got seq %v %v", seq, resumed)
				}
			}
		})
	}
}

func TestSendMessageBillingAndEntitlement(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ws := msgsWorkspace(t, h, h.Key, "")
	archived := msgsWorkspace(t, h, h.Key, "")
	msgsSetState(t, h, archived, "archived")
	ctx := context.Background()
	update := func(u core.AccountUpdate) {
		t.Helper()
		if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, u); err != nil {
			t.Fatalf("update account: %v", err)
		}
	}
	yes, no := true, false
	past, future := time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	send := func(ws string, body any) *hubtest.Response {
		t.Helper()
		return msgsCall(t, h, "POST", msgsPath(ws), h.Key, body)
	}
	ok := map[string]any{"text": "hi"}

	steps := []struct {
		name   string
		update *core.AccountUpdate
		ws     string
		body   any
		status int
		code   string
	}{
		{"billing hold", &core.AccountUpdate{BillingHold: &yes}, ws, ok, 403, "cloud_billing_hold"},
		{"hold: validation first", nil, ws, map[string]any{"text": ""}, 400, "invalid_message"},
		{"hold: lookup first", nil, "ws_0000000000000000", ok, 404, "cloud_workspace_not_found"},
		{"hold: asset lookup first", nil, ws, map[string]any{"text": "a", "attachments": []string{"asset_AAAAAAAAAAAAAAAA"}}, 404, "api_asset_not_found"},
		{"hold: state first", nil, archived, ok, 409, "workspace_not_accepting_messages"},
		{"hold lifted", &core.AccountUpdate{BillingHold: &no}, ws, ok, 200, ""},
		{"billing period over", &core.AccountUpdate{Metered: &yes, BillingPeriodEnd: &past}, ws, ok, 403, "cloud_billing_period_missing"},
		{"billing period current", &core.AccountUpdate{BillingPeriodEnd: &future}, ws, ok, 200, ""},
		{"metered, no billing period", &core.AccountUpdate{ClearBillingPeriod: true}, ws, ok, 403, "cloud_billing_period_missing"},
		{"not metered", &core.AccountUpdate{Metered: &no}, ws, ok, 200, ""},
		{"not metered, period over", &core.AccountUpdate{BillingPeriodEnd: &past}, ws, ok, 200, ""},
		{"entitlement removed", &core.AccountUpdate{Entitled: &no}, ws, ok, 403, "cloud_entitlement_required"},
		{"entitlement before validation", nil, ws, []byte(`{`), 403, "cloud_entitlement_required"},
		{"entitlement before lookup", nil, "ws_0000000000000000", ok, 403, "cloud_entitlement_required"},
	}
	for _, s := range steps { // sequential: each step changes the account
		if s.update != nil {
			update(*s.update)
		}
		r := send(s.ws, s.body)
		if r.Status != s.status || r.Code() != s.code {
			t.Fatalf("%s: expected %d %s, got %d %s", s.name, s.status, s.code, r.Status, r.Raw)
		}
	}
	if n := msgsCount(t, h, ws); n != 4 {
		t.Fatalf("expected only the 4 accepted sends to be stored, got %d", n)
	}
	r := msgsCall(t, h, "GET", msgsPath(ws), h.Key, nil)
	r.Expect(t, 403, "cloud_entitlement_required")
}

func TestSendMessageWithoutContentKey(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithoutContentKey())
	ws := msgsWorkspace(t, h, h.Key, "")
	msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "hi"}).Expect(t, 503, "api_content_encryption_not_configured")
	msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": "hi"}, "Idempotency-Key", "k").
		Expect(t, 503, "api_content_encryption_not_configured")
	// Checks that come first still answer.
	msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": ""}).Expect(t, 400, "invalid_message")
	msgsCall(t, h, "POST", msgsPath("ws_0000000000000000"), h.Key, map[string]any{"text": "hi"}).Expect(t, 404, "cloud_workspace_not_found")
	// Reading keeps working, and nothing was stored.
	msgs, body := msgsList(t, h, h.Key, ws, "")
	if len(msgs) != 0 || body["latestSeq"] != float64(0) {
		t.Fatalf("expected an empty conversation with latestSeq 0, got %v", body)
	}
	g := msgsCall(t, h, "GET", "/v1/api/workspaces/"+ws, h.Key, nil).Expect(t, 200, "")
	if g.Body["workspace"].(map[string]any)["latestSeq"] != float64(0) {
		t.Fatalf("expected latestSeq 0 after refused sends, got %s", g.Raw)
	}
}

func TestSendMessageIdempotency(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	send := func(t *testing.T, ws string, body any, headers ...string) *hubtest.Response {
		t.Helper()
		return msgsCall(t, h, "POST", msgsPath(ws), h.Key, body, headers...)
	}

	t.Run("replay returns the original receipt", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "prompt")
		first := send(t, ws, map[string]any{"text": "hi"}, "Idempotency-Key", "k1")
		id, seq, status, resumed := msgsReceipt(t, first)
		if seq != 2 || status != "queued" || resumed {
			t.Fatalf("expected seq 2 queued, got %s", first.Raw)
		}
		send(t, ws, map[string]any{"text": "between"}) // seq 3
		replays := []struct {
			name    string
			body    any
			headers []string
		}{
			{"same header", map[string]any{"text": "hi"}, []string{"Idempotency-Key", "k1"}},
			{"key in the body", map[string]any{"text": "hi", "idempotencyKey": "k1"}, nil},
			{"both, equal", map[string]any{"text": "hi", "idempotencyKey": "k1"}, []string{"Idempotency-Key", "k1"}},
			{"key trimmed", map[string]any{"text": "hi"}, []string{"Idempotency-Key", "  k1 "}},
			{"text normalised", map[string]any{"text": "  hi\n"}, []string{"Idempotency-Key", "k1"}},
			{"attachments null", []byte(`{"text":"hi","attachments":null}`), []string{"Idempotency-Key", "k1"}},
		}
		for _, rp := range replays {
			r := send(t, ws, rp.body, rp.headers...)
			if r.Status != 200 || !bytes.Equal(r.Raw, first.Raw) {
				t.Fatalf("%s: expected 200 %s, got %d %s", rp.name, first.Raw, r.Status, r.Raw)
			}
		}
		if n := msgsCount(t, h, ws); n != 3 {
			t.Fatalf("expected 3 messages (prompt, hi, between), got %d", n)
		}
		msgs, _ := msgsList(t, h, h.Key, ws, "")
		if msgs[1]["messageId"] != id || msgs[1]["text"] != "hi" {
			t.Fatalf("expected seq 2 to be %s hi, got %v", id, msgs[1])
		}
		// A new key is a new message.
		_, seq, _, _ = msgsReceipt(t, send(t, ws, map[string]any{"text": "hi"}, "Idempotency-Key", "k2"))
		if seq != 4 {
			t.Fatalf("expected a new key to give seq 4, got %v", seq)
		}
	})

	t.Run("different request with the key", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		msgsReceipt(t, send(t, ws, map[string]any{"text": "hi"}, "Idempotency-Key", "k"))
		for name, body := range map[string]any{
			"other text":        map[string]any{"text": "hello"},
			"added attachments": map[string]any{"text": "hi", "attachments": []string{"asset_AAAAAAAAAAAAAAAA"}},
		} {
			r := send(t, ws, body, "Idempotency-Key", "k")
			if r.Status != 409 || r.Code() != "idempotency_key_reused_with_different_request" {
				t.Fatalf("%s: expected 409 idempotency_key_reused_with_different_request, got %d %s", name, r.Status, r.Raw)
			}
		}
		if n := msgsCount(t, h, ws); n != 1 {
			t.Fatalf("expected 1 message, got %d", n)
		}
	})

	t.Run("keys are scoped to the workspace", func(t *testing.T) {
		t.Parallel()
		a, b := msgsWorkspace(t, h, h.Key, ""), msgsWorkspace(t, h, h.Key, "")
		idA, _, _, _ := msgsReceipt(t, send(t, a, map[string]any{"text": "hi"}, "Idempotency-Key", "shared"))
		idB, seqB, _, _ := msgsReceipt(t, send(t, b, map[string]any{"text": "other"}, "Idempotency-Key", "shared"))
		if idA == idB || seqB != 1 {
			t.Fatalf("expected an independent message in the second workspace, got %s/%s seq %v", idA, idB, seqB)
		}
	})

	t.Run("replay follows the message status", func(t *testing.T) {
		t.Parallel()
		cases := []struct {
			status, receipt string
			code            string
		}{
			{"pending", "queued", ""},
			{"delivered", "delivered", ""},
			{"settled", "delivered", ""},
			{"expired", "", "message_not_deliverable"},
			{"failed", "", "message_not_deliverable"},
		}
		ws := msgsWorkspace(t, h, h.Key, "")
		for _, tc := range cases {
			key := "status-" + tc.status
			id, seq, _, _ := msgsReceipt(t, send(t, ws, map[string]any{"text": key}, "Idempotency-Key", key))
			msgsSQL(t, h, `UPDATE messages SET status = $1 WHERE id = $2`, tc.status, id)
			r := send(t, ws, map[string]any{"text": key}, "Idempotency-Key", key)
			if tc.code != "" {
				if r.Status != 409 || r.Code() != tc.code {
					t.Fatalf("%s: expected 409 %s, got %d %s", tc.status, tc.code, r.Status, r.Raw)
				}
				continue
			}
			gotID, gotSeq, status, _ := msgsReceipt(t, r)
			if gotID != id || gotSeq != seq || status != tc.receipt {
				t.Fatalf("%s: expected %s seq %v %s, got %s", tc.status, id, seq, tc.receipt, r.Raw)
			}
		}
		if n := msgsCount(t, h, ws); n != len(cases) {
			t.Fatalf("expected %d messages, got %d", len(cases), n)
		}
	})

	t.Run("replay keeps resumeTriggered", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		msgsSetState(t, h, ws, "paused")
		first := send(t, ws, map[string]any{"text": "wake"}, "Idempotency-Key", "wake")
		if _, _, _, resumed := msgsReceipt(t, first); !resumed {
			t.Fatalf("expected resumeTriggered true, got %s", first.Raw)
		}
		r := send(t, ws, map[string]any{"text": "wake"}, "Idempotency-Key", "wake")
		if r.Status != 200 || !bytes.Equal(r.Raw, first.Raw) {
			t.Fatalf("expected the replay to be %s, got %d %s", first.Raw, r.Status, r.Raw)
		}
	})

	t.Run("a refused request does not use up the key", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		send(t, ws, map[string]any{"text": "a", "attachments": []string{"asset_AAAAAAAAAAAAAAAA"}}, "Idempotency-Key", "k").
			Expect(t, 404, "api_asset_not_found")
		_, seq, _, _ := msgsReceipt(t, send(t, ws, map[string]any{"text": "b"}, "Idempotency-Key", "k"))
		if seq != 1 {
			t.Fatalf("expected the key to be free after a refused send (seq 1), got %v", seq)
		}
	})

	t.Run("concurrent sends with one key make one message", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "prompt")
		const n = 30
		results := h.TryAll(t, n, "POST", msgsPath(ws), h.Key, map[string]any{"text": "once"}, "Idempotency-Key", "race")
		for i := range n {
			if results[i].Status != 200 || !bytes.Equal(results[i].Raw, results[0].Raw) {
				t.Fatalf("expected every answer to be 200 %s, got %d %s", results[0].Raw, results[i].Status, results[i].Raw)
			}
		}
		if _, seq, _, _ := msgsReceipt(t, results[0]); seq != 2 {
			t.Fatalf("expected seq 2, got %v", seq)
		}
		if c := msgsCount(t, h, ws); c != 2 {
			t.Fatalf("expected 2 messages (prompt and one send), got %d", c)
		}
	})
}

func TestListMessages(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)

	t.Run("fields and order", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "one")
		before := time.Now().Add(-time.Minute).UnixMilli()
		var ids []string
		for _, text := range []string{"two", "three"} {
			id, _, _, _ := msgsReceipt(t, msgsCall(t, h, "POST", msgsPath(ws), h.Key, map[string]any{"text": text}))
			ids = append(ids, id)
		}
		msgs, body := msgsList(t, h, h.Key, ws, "")
		if len(msgs) != 3 || body["latestSeq"] != float64(3) {
			t.Fatalf("expected 3 messages and latestSeq 3, got %v", body)
		}
		if _, ok := body["turnFailure"]; ok {
			t.Fatalf("expected no turnFailure without assistant messages, got %v", body)
		}
		for i, m := range msgs {
			want := []string{"one", "two", "three"}[i]
			id, _ := m["messageId"].(string)
			if m["seq"] != float64(i+1) || m["text"] != want || m["role"] != "user" || m["status"] != "pending" {
				t.Fatalf("expected seq %d user pending %q, got %v", i+1, want, m)
			}
			if !core.ValidID(id, core.PrefixMessage) || (i > 0 && id != ids[i-1]) {
				t.Fatalf("expected message id %v, got %q", ids, id)
			}
			if m["turnId"] != core.TurnIDFor(id) {
				t.Fatalf("expected turnId %s, got %v", core.TurnIDFor(id), m["turnId"])
			}
			if c, _ := m["createdAt"].(float64); int64(c) < before || int64(c) > time.Now().Add(time.Minute).UnixMilli() {
				t.Fatalf("expected createdAt in epoch milliseconds near now, got %v", m["createdAt"])
			}
			for _, absent := range []string{"outcome", "deliveredAt", "attachments"} {
				if v, ok := m[absent]; ok {
					t.Fatalf("expected no %s on a pending user message without files, got %v", absent, v)
				}
			}
		}
		// deliveredAt appears once the message is delivered.
		at := time.Now().Truncate(time.Millisecond)
		msgsSQL(t, h, `UPDATE messages SET status = 'delivered', delivered_at = $1 WHERE id = $2`, at, ids[0])
		msgs, _ = msgsList(t, h, h.Key, ws, "afterSeq=1&limit=1")
		if len(msgs) != 1 || msgs[0]["status"] != "delivered" || msgs[0]["deliveredAt"] != float64(at.UnixMilli()) {
			t.Fatalf("expected seq 2 delivered at %d, got %v", at.UnixMilli(), msgs)
		}
	})

	t.Run("empty pages", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "")
		r := msgsCall(t, h, "GET", msgsPath(ws), h.Key, nil).Expect(t, 200, "")
		if string(r.Raw) != `{"latestSeq":0,"messages":[]}` && string(r.Raw) != `{"messages":[],"latestSeq":0}` {
			t.Fatalf("expected an empty messages array and latestSeq 0, got %s", r.Raw)
		}
		ws2 := msgsWorkspace(t, h, h.Key, "only")
		for q, want := range map[string]float64{"afterSeq=1": 1, "afterSeq=1000": 1000, "afterSeq=5&limit=3": 5,
			"afterSeq=9007199254740991": 9007199254740991} {
			msgs, body := msgsList(t, h, h.Key, ws2, q)
			if len(msgs) != 0 || body["latestSeq"] != want {
				t.Fatalf("%s: expected no messages and latestSeq %v, got %v", q, want, body)
			}
		}
	})

	t.Run("invalid query", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "x")
		for _, q := range []string{
			"afterSeq=-1", "afterSeq=abc", "afterSeq=1.5", "afterSeq=1e3", "afterSeq=0x10",
			"limit=0", "limit=-3", "limit=x", "limit=2.5", "limit=-99999999999999999999",
			"afterSeq=1&limit=0", "afterSeq=-1&limit=10",
			"afterSeq=9007199254740992", "afterSeq=9223372036854775807", // above 2^53-1
		} {
			r := msgsCall(t, h, "GET", msgsPath(ws)+"?"+q, h.Key, nil)
			if r.Status != 400 || r.Code() != "invalid_message_query" {
				t.Fatalf("%s: expected 400 invalid_message_query, got %d %s", q, r.Status, r.Raw)
			}
		}
		// The query is checked before the workspace is looked up.
		msgsCall(t, h, "GET", msgsPath("ws_0000000000000000")+"?limit=0", h.Key, nil).Expect(t, 400, "invalid_message_query")
	})

	t.Run("not found", func(t *testing.T) {
		t.Parallel()
		mine := msgsWorkspace(t, h, h.Key, "secret")
		deleted := msgsWorkspace(t, h, h.Key, "gone")
		msgsSetState(t, h, deleted, "deleted")
		_, otherKey := h.NewAccount(true)
		for name, c := range map[string]struct{ key, ws string }{
			"unknown":       {h.Key, "ws_0000000000000000"},
			"malformed":     {h.Key, "nope"},
			"deleted":       {h.Key, deleted},
			"other account": {otherKey, mine},
		} {
			r := msgsCall(t, h, "GET", msgsPath(c.ws), c.key, nil)
			if r.Status != 404 || r.Code() != "cloud_workspace_not_found" {
				t.Fatalf("%s: expected 404 cloud_workspace_not_found, got %d %s", name, r.Status, r.Raw)
			}
		}
		msgsCall(t, h, "GET", msgsPath(mine), "", nil).Expect(t, 401, "missing_api_key")
	})

	t.Run("readable in states that take no messages", func(t *testing.T) {
		t.Parallel()
		for _, state := range []string{"archived", "failed", "deleting"} {
			ws := msgsWorkspace(t, h, h.Key, "kept")
			msgsSetState(t, h, ws, state)
			msgs, _ := msgsList(t, h, h.Key, ws, "")
			if len(msgs) != 1 || msgs[0]["text"] != "kept" {
				t.Fatalf("%s: expected the conversation to stay readable, got %v", state, msgs)
			}
		}
	})

	// turnFailure needs a turn that ended in error: hub/turns/runtime_test.go and
	// hub/limits/limits_test.go run such turns and check it.

	t.Run("paging across 450 messages", func(t *testing.T) {
		t.Parallel()
		ws := msgsWorkspace(t, h, h.Key, "m0")
		const total = 450
		var wg sync.WaitGroup
		errs := make(chan error, total)
		next := make(chan int)
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					r, err := msgsTry(h, "POST", msgsPath(ws), h.Key, map[string]any{"text": fmt.Sprintf("m%d", i)})
					if err == nil && r.Status != 200 {
						err = fmt.Errorf("send m%d: expected 200, got %d %s", i, r.Status, r.Raw)
					}
					if err != nil {
						errs <- err
					}
				}
			}()
		}
		for i := 1; i < total; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}

		seen := map[string]bool{}
		check := func(q string, from, n int, wantLatest float64) {
			t.Helper()
			msgs, body := msgsList(t, h, h.Key, ws, q)
			if len(msgs) != n || body["latestSeq"] != wantLatest {
				t.Fatalf("%s: expected %d messages and latestSeq %v, got %d and %v", q, n, wantLatest, len(msgs), body["latestSeq"])
			}
			for i, m := range msgs {
				if m["seq"] != float64(from+i) {
					t.Fatalf("%s: expected seq %d at %d (oldest first, no gaps), got %v", q, from+i, i, m["seq"])
				}
				seen[m["text"].(string)] = true
			}
		}
		check("", 1, 200, 200)                     // default limit
		check("afterSeq=0&limit=500", 1, 200, 200) // capped
		check("afterSeq=200&limit=200", 201, 200, 400)
		check("afterSeq=400&limit=200", 401, 50, 450) // short page: caught up
		check("afterSeq=450", 0, 0, 450)
		check("afterSeq=10&limit=7", 11, 7, 17)
		check("limit=1", 1, 1, 1)
		check("afterSeq=449&limit=99999999999999999999", 450, 1, 450) // huge limit capped too
		if len(seen) != total {
			t.Fatalf("expected %d distinct texts across the pages, got %d", total, len(seen))
		}
		// Following latestSeq pages through everything exactly once.
		after, count := "0", 0
		for {
			msgs, body := msgsList(t, h, h.Key, ws, "limit=200&afterSeq="+url.QueryEscape(after))
			count += len(msgs)
			after = fmt.Sprint(int64(body["latestSeq"].(float64)))
			if len(msgs) < 200 {
				break
			}
		}
		if count != total || after != "450" {
			t.Fatalf("expected to page through %d messages ending at 450, got %d ending at %s", total, count, after)
		}
	})
}
