package api_test

import (
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

func TestCreateThenListMessages(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"prompt": "hi", "agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)
	if ws["state"] != "queued" || ws["agentStatus"] != "working" || ws["latestSeq"] != float64(1) {
		t.Fatalf("expected queued/working/latestSeq 1, got %v", ws)
	}
	m := h.Call("GET", "/v1/api/workspaces/"+ws["workspaceId"].(string)+"/messages", h.Key, nil).Expect(t, 200, "")
	msgs := m.Body["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["text"] != "hi" || msgs[0].(map[string]any)["seq"] != float64(1) {
		t.Fatalf("expected the prompt as seq 1, got %s", m.Raw)
	}
}
