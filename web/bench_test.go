package web_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// BenchmarkWorkspacePage200Messages draws a workspace's page over HTTP with a
// 200-message conversation (100 prompts, 100 Markdown replies): the session, the
// workspace, the rows, opening 200 sealed texts, rendering and sanitizing the replies,
// and the template. It reports the median (p50-ms) beside Go's mean.
func BenchmarkWorkspacePage200Messages(b *testing.B) {
	h := hubtest.Start(b, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(b)),
		hubtest.WithConfig(func(c *hub.Config) { c.AppSignInLinks = true }))
	ctx := context.Background()
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(b, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	for i := range 100 {
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{
			"text": fmt.Sprintf("reply %d with **bold**, `code` and a [link](https://example.com/%d), as people write", i, i)}).Expect(b, 200, "")
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ws := h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil).Body["workspace"].(map[string]any)
		if ws["latestSeq"] == float64(200) && ws["agentStatus"] == "idle" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the 100 turns did not finish: %v", ws)
		}
		time.Sleep(100 * time.Millisecond)
	}
	email, _ := core.NewIdentity(core.IdentityEmail, "bench@example.com")
	ms, err := h.Service.Admin.AddMember(ctx, h.Account.ID, email, core.RoleMember, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	token, err := h.Service.Admin.SignInLink(ctx, h.Account.ID, ms.Member.ID)
	if err != nil {
		b.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(h.URL + "/app/signin/link?token=" + token)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	cookie, _, _ := strings.Cut(res.Header.Get("Set-Cookie"), ";")
	req, _ := http.NewRequest("GET", h.URL+"/app/workspaces/"+id, nil)
	req.Header.Set("Cookie", cookie)
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("page: %v %v", resp, err)
		}
		var buf [32 << 10]byte
		for {
			if _, err := resp.Body.Read(buf[:]); err != nil {
				break
			}
		}
		resp.Body.Close()
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}
