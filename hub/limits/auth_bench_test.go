package limits_test

import (
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// BenchmarkAuthenticatedGet is one keep-alive client reading a small authenticated
// resource: the per-request cost of the key lookup (with its last-used stamp) and the
// API's framing, without anything else of note.
func BenchmarkAuthenticatedGet(b *testing.B) {
	h := hubtest.Start(b)
	benchRequests(b, h, "GET", "/v1/api/agents", "", 200)
}
