package limits_test

import (
	"context"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

func setQuotas(t *testing.T, h *hubtest.Hub, accountID string, workspaces, openMessages *int) {
	t.Helper()
	if _, err := h.Service.Admin.UpdateAccount(context.Background(), accountID,
		core.AccountUpdate{MaxWorkspaces: workspaces, MaxOpenMessages: openMessages}); err != nil {
		t.Fatal(err)
	}
}

func ptr(n int) *int { return &n }

// An account at its quota of live workspaces gets 429 quota_exceeded naming the limit
// and how to get more, however many requests race for the last place; other accounts
// are not held back, and the operator's -1 gives the hub's default back.
func TestWorkspaceQuotaIsHeldUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	setQuotas(t, h, h.Account.ID, ptr(3), nil)
	body := map[string]any{"agent": "agent_1", "model": "m"}
	created, refused := 0, 0
	for _, r := range h.TryAll(t, 10, "POST", "/v1/api/workspaces", h.Key, body) {
		switch {
		case r.Status == 201:
			created++
		case r.Status == 429 && r.Code() == "quota_exceeded":
			refused++
			if d, _ := r.Body["detail"].(string); !strings.Contains(d, "limit is 3") || !strings.Contains(d, "--max-workspaces") {
				t.Errorf("expected the detail to name the limit and how to raise it, got %q", d)
			}
		default:
			t.Fatalf("expected 201 or 429 quota_exceeded, got %d %s", r.Status, r.Raw)
		}
	}
	if created != 3 || refused != 7 {
		t.Fatalf("expected 3 created and 7 refused, got %d and %d", created, refused)
	}
	list := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "")
	if n := len(list.Body["workspaces"].([]any)); n != 3 {
		t.Fatalf("expected 3 workspaces stored, got %d", n)
	}
	other, otherKey := h.NewAccount(true)
	h.NewProject(other.ID, hubtest.GitRepo(t))
	h.Call("POST", "/v1/api/workspaces", otherKey, body).Expect(t, 201, "")
	setQuotas(t, h, h.Account.ID, ptr(-1), nil)
	h.Call("POST", "/v1/api/workspaces", h.Key, body).Expect(t, 201, "")
}

// A workspace holds at most its quota of messages waiting for the agent: one more is
// refused and not stored, even sent again with its idempotency key.
func TestOpenMessageQuotaRefusesWithoutStoring(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t) // no worker: messages stay waiting
	setQuotas(t, h, h.Account.ID, nil, ptr(3))
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "prompt": "one"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	send := func(text string, status int, code string) {
		t.Helper()
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": text}, "Idempotency-Key", "k-"+text).
			Expect(t, status, code)
	}
	send("two", 200, "")
	send("three", 200, "")
	send("four", 429, "quota_exceeded")
	send("four", 429, "quota_exceeded")
	msgs := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	var texts []string
	for _, m := range msgs.Body["messages"].([]any) {
		texts = append(texts, m.(map[string]any)["text"].(string))
	}
	if strings.Join(texts, ",") != "one,two,three" {
		t.Fatalf("expected the refused message not stored, got %q", texts)
	}
}
