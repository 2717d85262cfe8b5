package limits_test

import (
	"fmt"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// BenchmarkListMessagesPage reads a 200-message page over HTTP: key lookup, the
// workspace, the page's rows, unsealing 200 texts and encoding the JSON.
func BenchmarkListMessagesPage(b *testing.B) {
	h := hubtest.Start(b)
	id := hubtest.CreateWorkspace(b, h, "")
	for i := range 200 {
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": fmt.Sprintf("message %d with a few ordinary words in it, as people write", i)}).Expect(b, 200, "")
	}
	benchRequests(b, h, "GET", "/v1/api/workspaces/"+id+"/messages?limit=200", "", 200)
}
