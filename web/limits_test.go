package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// An owner at the account's key quota is told so on the keys page, with how to get
// more; no key is made.
func TestAnOwnerPastTheKeyQuotaIsToldInWords(t *testing.T) {
	t.Parallel()
	// The hub's test key is the account's one key: the quota is met.
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxKeys = 1 }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.signIn("ada-1")
	_, _, page := s.get("/app/keys")
	code, _, page := s.post("/app/keys", url.Values{"csrf": {csrfOf(t, page)}, "name": {"one too many"}})
	if code != http.StatusTooManyRequests || !strings.Contains(page, "limit is 1") || newKey.MatchString(page) {
		t.Fatalf("expected 429 naming the limit and no key, got %d:\n%s", code, page)
	}
}

// A member's live pages count toward the account's streams with its keys' streams:
// past WSHUB_MAX_STREAMS_PER_ACCOUNT the page's stream is refused in words.
func TestLivePagesCountTowardTheAccountsStreams(t *testing.T) {
	t.Parallel()
	s := newSite(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxStreamsPerAccount = 1 }))
	s.person("ada-1", "ada@example.com", "Ada", core.RoleOwner)
	s.signIn("ada-1")
	id := s.hub.Call("POST", "/v1/api/workspaces", s.hub.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "").
		Body["workspace"].(map[string]any)["workspaceId"].(string)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.hub.URL+"/v1/api/workspaces/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+s.hub.Key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("expected the key's stream open, got %d", res.StatusCode)
	}
	code, _, page := s.get("/app/workspaces/" + id + "/events")
	if code != http.StatusTooManyRequests || !strings.Contains(page, "This account has as many live pages") {
		t.Fatalf("expected the live page refused for the account, got %d:\n%s", code, page)
	}
}
