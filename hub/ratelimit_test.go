package hub_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// Each key has its own token bucket: past its burst a key gets 429 rate_limited with
// Retry-After and the IETF RateLimit fields, while another key of the same account
// goes on, and a request with a bad key is refused 401 before the limit is counted.
func TestRateLimitIsPerKey(t *testing.T) {
	t.Parallel()
	// A rate slow enough that no token comes back during the test.
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.APIRate, c.APIBurst = 0.01, 3 }))
	for i := range 3 {
		r := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 200, "")
		if got, want := r.Header.Get("RateLimit"), `"key";r=`+strconv.Itoa(2-i); len(got) < len(want) || got[:len(want)] != want {
			t.Fatalf("request %d: expected RateLimit %s…, got %q", i+1, want, got)
		}
	}
	r := h.Call("GET", "/v1/api/workspaces", h.Key, nil).Expect(t, 429, "rate_limited")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("expected Retry-After in seconds, got %q", r.Header.Get("Retry-After"))
	}
	if got := r.Header.Get("RateLimit-Policy"); got != `"key";q=3;w=300` {
		t.Fatalf("expected the policy of 3 over 300 s, got %q", got)
	}
	h.Call("GET", "/v1/api/workspaces", "svc_"+"nope", nil).Expect(t, 401, "invalid_api_key")
	_, second, err := h.Service.Admin.CreateAPIKey(t.Context(), h.Account.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	h.Call("GET", "/v1/api/workspaces", second, nil).Expect(t, 200, "")
}

// A key holds at most WSHUB_MAX_STREAMS_PER_KEY open event streams on a replica: one
// more is 429 too_many_streams, while the same key can still read pages and another
// key can still stream.
func TestEventStreamsPerKeyAreBounded(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxStreamsPerKey = 2 }))
	id := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "").
		Body["workspace"].(map[string]any)["workspaceId"].(string)
	for range 2 {
		_, drop := stream(t, h, id, "")
		defer drop()
	}
	r := h.Call("GET", "/v1/api/workspaces/"+id+"/events", h.Key, nil, "Accept", "text/event-stream").Expect(t, 429, "too_many_streams")
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("expected a Retry-After, got %v", r.Header)
	}
	h.Call("GET", "/v1/api/workspaces/"+id+"/events", h.Key, nil).Expect(t, 200, "")
	_, second, err := h.Service.Admin.CreateAPIKey(t.Context(), h.Account.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", h.URL+"/v1/api/workspaces/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+second)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("expected another key's stream opened, got %d", resp.StatusCode)
	}
}
