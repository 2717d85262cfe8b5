package api_test

import (
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

// A NUL character in any string of a body, or a body that is not UTF-8, is refused in
// words: never changed silently (encoding/json would make invalid bytes U+FFFD), never
// a 500 from the store.
func TestEveryFieldRefusesNULAndInvalidUTF8InWords(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := "/v1/api/workspaces/" + r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	for _, tc := range []struct {
		name, path string
		body       []byte
		want       string
	}{
		{"a prompt with a NUL", "/v1/api/workspaces", []byte(`{"agent":"agent_1","model":"m","prompt":"fix\u0000it"}`), "prompt holds a NUL"},
		{"a prompt not UTF-8", "/v1/api/workspaces", []byte("{\"agent\":\"agent_1\",\"model\":\"m\",\"prompt\":\"fix \xc3\"}"), "not valid UTF-8"},
		{"a branch with a NUL", "/v1/api/workspaces", []byte(`{"agent":"agent_1","model":"m","branch":"a\u0000"}`), "branch holds a NUL"},
		{"an unknown field with a NUL", "/v1/api/workspaces", []byte(`{"agent":"agent_1","model":"m","colour":["x","\u0000"]}`), "colour holds a NUL"},
		{"a field name with a NUL", "/v1/api/workspaces", []byte(`{"agent":"agent_1","model":"m","a\u0000":1}`), "field name holds a NUL"},
		{"a text with a NUL", ws + "/messages", []byte(`{"text":"hi\u0000"}`), "text holds a NUL"},
		{"a text not UTF-8", ws + "/messages", []byte("{\"text\":\"hi \xff\"}"), "not valid UTF-8"},
		{"an attachment id with a NUL", ws + "/messages", []byte(`{"text":"hi","attachments":["asset_\u0000"]}`), "attachments holds a NUL"},
		{"an idempotency key with a NUL", ws + "/messages", []byte(`{"text":"hi","idempotencyKey":"k\u0000"}`), "idempotencyKey holds a NUL"},
		{"a webhook description with a NUL", "/v1/api/webhooks", []byte(`{"url":"https://hooks.example.com/","description":"a\u0000"}`), "description holds a NUL"},
		{"a webhook URL not UTF-8", "/v1/api/webhooks", []byte("{\"url\":\"https://hooks.example.com/\xfe\"}"), "not valid UTF-8"},
		{"a decision with a NUL", ws + "/approvals/apr_0000000000000000", []byte(`{"decision":"allow\u0000"}`), "decision holds a NUL"},
	} {
		r := h.Call("POST", tc.path, h.Key, tc.body)
		if r.Status != 400 || r.Code() != core.CodeInvalidRequest || !strings.Contains(string(r.Raw), tc.want) {
			t.Errorf("%s: expected 400 %s saying %q, got %d %s", tc.name, core.CodeInvalidRequest, tc.want, r.Status, r.Raw)
		}
	}
	// An escaped backslash before "u0000" is text, not a NUL.
	h.Call("POST", ws+"/messages", h.Key, []byte(`{"text":"C:\\u0000"}`)).Expect(t, 200, "")
}
