package limits_test

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"sync"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// gzipBomb is a gzip body that inflates to 1 GiB of zeros, about 1 MiB on the wire.
// It is 1,024 gzip members of 1 MiB of zeros each, one after another (RFC 1952 2.2:
// every gzip reader, Fiber's included, inflates them all): the same bomb as one
// stream, made in milliseconds instead of compressing a gigabyte under -race.
var gzipBomb = sync.OnceValue(func() []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	_, _ = zw.Write(make([]byte, 1<<20))
	_ = zw.Close()
	return bytes.Repeat(member.Bytes(), 1024)
})

// TestEncodedBodiesAreNotInflated posts a gzip bomb to every kind of route that takes a
// body, with and without a key. Each is refused, and the process (hub and client both)
// allocates well under 64 MiB doing so: the body is never inflated. Before the fix,
// /slack/events inflated it (Fiber's c.Body()) before checking Slack's signature.
func TestEncodedBodiesAreNotInflated(t *testing.T) {
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) {
		c.SlackBotToken, c.SlackSigningSecret, c.SlackAPIURL = "xoxb-test", "signing-secret", "http://127.0.0.1:1/"
	}))
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	bomb := gzipBomb()
	for _, tt := range []struct {
		name, path, key string
		status          int
		code            string
	}{
		{"slack events", "/slack/events", "", 415, "unsupported_content_encoding"},
		// /v1/api checks the key first (behaviour.md), then refuses the encoding with
		// the codes it has always used.
		{"api without a key", "/v1/api/workspaces", "", 401, "missing_api_key"},
		{"api create", "/v1/api/workspaces", h.Key, 400, "invalid_json"},
		{"api send", "/v1/api/workspaces/" + ws + "/messages", h.Key, 400, "invalid_json"},
		{"api upload", "/v1/api/workspaces/" + ws + "/attachments", h.Key, 400, "invalid_asset_body"},
		{"health", "/healthz", "", 415, "unsupported_content_encoding"},
		{"unknown path", "/nowhere", "", 415, "unsupported_content_encoding"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r, err := h.Try("POST", tt.path, tt.key, bomb, "Content-Type", "application/json", "Content-Encoding", "gzip")
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("expected an answer, got %v", err)
			}
			// TotalAlloc only grows: it bounds whatever the heap held at its peak.
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d %s; the process allocated %d KiB while answering", tt.path, r.Status, r.Code(), grew>>10)
			r.Expect(t, tt.status, tt.code)
			if grew > 64<<20 {
				t.Errorf("expected the hub to allocate under 64 MiB refusing a %d-byte gzip bomb, it allocated %d MiB", len(bomb), grew>>20)
			}
		})
	}
}
