package limits_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
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
		_, drop := hubtest.Stream(t, h, id, "")
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

// spellings are one key's Authorization header written as authentication accepts it:
// the scheme in any case, any spaces around the key.
func spellings(key string) []string {
	return []string{"Bearer " + key, "bearer " + key, "BeArEr " + key, "Bearer   " + key, "BEARER  " + key + " "}
}

// A key's bucket is the key's, however its header is spelt: new spellings do not
// bring new tokens.
func TestRateLimitCountsAKeyHoweverItsHeaderIsSpelt(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.APIRate, c.APIBurst = 0.01, 3 }))
	sp := spellings(h.Key)
	for i := range 3 {
		h.Call("GET", "/v1/api/workspaces", "", nil, "Authorization", sp[i]).Expect(t, 200, "")
	}
	for _, auth := range sp {
		h.Call("GET", "/v1/api/workspaces", "", nil, "Authorization", auth).Expect(t, 429, "rate_limited")
	}
}

// openStream opens an event stream with the Authorization header as given and returns
// its status and the error code of a refusal; close ends the stream.
func openStream(t *testing.T, h *hubtest.Hub, id, auth string) (status int, code string, close func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", h.URL+"/v1/api/workspaces/"+id+"/events", nil)
	req.Header.Set("Authorization", auth)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		var body struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		code = body.Error
	}
	return resp.StatusCode, code, func() { cancel(); resp.Body.Close() }
}

// A key's open streams are counted for the key, however its header is spelt.
func TestEventStreamsOfAKeyAreBoundedHoweverItsHeaderIsSpelt(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxStreamsPerKey = 2 }))
	id := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "").
		Body["workspace"].(map[string]any)["workspaceId"].(string)
	for i, auth := range spellings(h.Key) {
		status, code, closeStream := openStream(t, h, id, auth)
		defer closeStream()
		if want := map[bool]int{true: 200, false: 429}[i < 2]; status != want {
			t.Fatalf("stream %d (%q): expected %d, got %d %s", i+1, auth[:8], want, status, code)
		}
		if i >= 2 && code != "too_many_streams" {
			t.Fatalf("stream %d: expected too_many_streams, got %q", i+1, code)
		}
	}
}

// An account holds at most WSHUB_MAX_STREAMS_PER_ACCOUNT streams over all its keys, so
// making keys does not multiply its share; another account is not counted with it.
func TestEventStreamsOfAnAccountAreBoundedOverItsKeys(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxStreamsPerKey, c.MaxStreamsPerAccount = 2, 3 }))
	id := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "").
		Body["workspace"].(map[string]any)["workspaceId"].(string)
	_, second, err := h.Service.Admin.CreateAPIKey(t.Context(), h.Account.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{h.Key, h.Key, second} {
		status, code, closeStream := openStream(t, h, id, "Bearer "+key)
		defer closeStream()
		if status != 200 {
			t.Fatalf("stream %d: expected 200, got %d %s", i+1, status, code)
		}
	}
	status, code, closeStream := openStream(t, h, id, "Bearer "+second)
	defer closeStream()
	if status != 429 || code != "too_many_streams" {
		t.Fatalf("the account's fourth stream: expected 429 too_many_streams, got %d %q", status, code)
	}

	otherAcct, otherKey := h.NewAccount(true)
	h.NewProject(otherAcct.ID, hubtest.GitRepo(t))
	otherID := h.Call("POST", "/v1/api/workspaces", otherKey, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "").
		Body["workspace"].(map[string]any)["workspaceId"].(string)
	status, code, closeOther := openStream(t, h, otherID, "Bearer "+otherKey)
	defer closeOther()
	if status != 200 {
		t.Fatalf("another account's stream: expected 200, got %d %s", status, code)
	}
}

// An account holds at most WSHUB_MAX_KEYS live keys (its own --max-keys wins): one more
// is 429 quota_exceeded (the app's form: TestAnOwnerPastTheKeyQuotaIsToldInWords), and
// a revoked key frees its place.
func TestKeysPerAccountAreBounded(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.MaxKeys = 2 }))
	ctx := t.Context()
	k2, _, err := h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "third")
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.CodeQuotaExceeded || !strings.Contains(ce.Detail, "--max-keys") {
		t.Fatalf("the third key: expected quota_exceeded naming --max-keys, got %v", err)
	}
	if err := h.Service.Admin.RevokeAPIKey(ctx, k2.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err = h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "third"); err != nil {
		t.Fatalf("after a revoke: expected a key, got %v", err)
	}
	three := 3
	if _, err := h.Service.Admin.UpdateAccount(ctx, h.Account.ID, core.AccountUpdate{MaxKeys: &three}); err != nil {
		t.Fatal(err)
	}
	if _, _, err = h.Service.Admin.CreateAPIKey(ctx, h.Account.ID, "fourth"); err != nil {
		t.Fatalf("with --max-keys 3: expected a third live key, got %v", err)
	}
}
