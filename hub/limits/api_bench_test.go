package limits_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// benchRequests sends b.N requests from one keep-alive client, each body read to its
// end so the connection is reused (a body closed unread costs a new connection, and
// the benchmark would measure dialing).
func benchRequests(b *testing.B, h *hubtest.Hub, method, path, body string, want int) {
	b.Helper()
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, h.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+h.Key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatalf("%s %s: %v", method, path, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != want {
			b.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, err)
		}
	}
}

// BenchmarkGetWorkspace is make bench's B3 in process: the key lookup, one workspace
// read and its status object.
func BenchmarkGetWorkspace(b *testing.B) {
	h := hubtest.Start(b)
	id := hubtest.CreateWorkspace(b, h, "")
	benchRequests(b, h, "GET", "/v1/api/workspaces/"+id, "", 200)
}

// BenchmarkSendMessage is B1' in process: a send to a workspace whose runtime is off
// (the hub's jobs do not run here), so only the API path and its transaction count.
func BenchmarkSendMessage(b *testing.B) {
	h := hubtest.Start(b, hubtest.WithConfig(func(c *hub.Config) { c.MaxOpenMessages = 1 << 30 }))
	id := hubtest.CreateWorkspace(b, h, "")
	benchRequests(b, h, "POST", "/v1/api/workspaces/"+id+"/messages", `{"text":"bench"}`, 200)
}
