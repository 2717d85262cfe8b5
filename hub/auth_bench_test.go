package hub_test

import (
	"net/http"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// BenchmarkAuthenticatedGet is one keep-alive client reading a small authenticated
// resource: the per-request cost of the key lookup (with its last-used stamp) and the
// API's framing, without anything else of note.
func BenchmarkAuthenticatedGet(b *testing.B) {
	h := hubtest.Start(b)
	client := &http.Client{}
	req, _ := http.NewRequest("GET", h.URL+"/v1/api/agents", nil)
	req.Header.Set("Authorization", "Bearer "+h.Key)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := client.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("GET agents: %v %v", resp, err)
		}
		resp.Body.Close()
	}
}
