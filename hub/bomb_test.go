package hub_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// gzipBomb is a gzip stream of 1 GiB of zeros (about 1 MiB on the wire), made once.
var gzipBomb = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for range 1024 {
		_, _ = zw.Write(zeros)
	}
	_ = zw.Close()
	return buf.Bytes()
})

// TestEncodedBodiesAreNotInflated posts a gzip bomb, unauthenticated, to every route
// that takes a body. Each is refused, and the hub (in this process) allocates well
// under 64 MiB doing so: the body is never inflated. Before the fix, /slack/events
// inflated it (Fiber's c.Body()) before checking Slack's signature: gigabytes.
func TestEncodedBodiesAreNotInflated(t *testing.T) {
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) {
		c.SlackBotToken, c.SlackSigningSecret, c.SlackAPIURL = "xoxb-test", "signing-secret", "http://127.0.0.1:1/"
	}))
	bomb := gzipBomb()
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/slack/events", http.StatusUnsupportedMediaType},
		{"/v1/api/workspaces", http.StatusUnauthorized}, // the key is checked first (behaviour.md)
		{"/healthz", http.StatusUnsupportedMediaType},
		{"/nowhere", http.StatusUnsupportedMediaType},
	} {
		t.Run(tt.path, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			req, _ := http.NewRequest("POST", h.URL+tt.path, bytes.NewReader(bomb))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Encoding", "gzip")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("expected an answer, got %v", err)
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			runtime.ReadMemStats(&after)
			if resp.StatusCode != tt.status {
				t.Errorf("expected %d, got %d %s", tt.status, resp.StatusCode, body)
			}
			// TotalAlloc only grows: it bounds whatever the heap held at its peak.
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %d %s, %d KiB allocated by the whole process while answering", tt.path, resp.StatusCode, body, grew>>10)
			if grew > 64<<20 {
				t.Errorf("expected the hub to allocate under 64 MiB refusing a %d-byte gzip bomb, it allocated %d MiB", len(bomb), grew>>20)
			}
		})
	}
}
