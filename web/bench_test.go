package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// BenchmarkWorkspacePage200Messages draws a workspace's page over HTTP with a
// 200-message conversation (100 prompts, 100 Markdown replies): the session, the
// workspace, the rows, opening 200 sealed texts, rendering and sanitizing the replies,
// and the template. It reports the median (p50-ms) beside Go's mean.
func BenchmarkWorkspacePage200Messages(b *testing.B) {
	h := hubtest.Start(b, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(b)))
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(b, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	for i := range 100 {
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{
			"text": fmt.Sprintf("reply %d with **bold**, `code` and a [link](https://example.com/%d), as people write", i, i)}).Expect(b, 200, "")
	}
	eventually.NoError(b, 5*time.Minute, "the 100 turns finished", func() error {
		ws := h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil).Body["workspace"].(map[string]any)
		if ws["latestSeq"] == float64(200) && ws["agentStatus"] == "idle" {
			return nil
		}
		return fmt.Errorf("workspace %v", ws)
	})
	cookie := benchSession(b, h)
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
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
}

// BenchmarkWorkspaceList10000 draws the workspaces list of an account holding 10,000
// of them: the newest page, a page far back by its cursor, and a filter that matches
// few. Each reports its median (first-ms, deep-ms, filtered-ms): keyset paging keeps
// them what a 10-workspace account costs.
func BenchmarkWorkspaceList10000(b *testing.B) {
	h := hubtest.Start(b)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(b, 201, "")
	seed := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	// 10,000 copies of the seed row, a second apart, one in a hundred failed.
	if _, err := h.PG().DB().Exec(`INSERT INTO workspaces
		SELECT (jsonb_populate_record(w, jsonb_build_object('id', 'ws_' || lpad(i::text, 16, '0'), 'branch', 'bench-' || i,
			'created_at', w.created_at - i * interval '1 second',
			'state', CASE WHEN i % 100 = 0 THEN 'failed' ELSE w.state END))).*
		FROM workspaces w, generate_series(1, 10000) AS i WHERE w.id = $1`, seed); err != nil {
		b.Fatal(err)
	}
	if _, err := h.PG().DB().Exec(`ANALYZE workspaces`); err != nil {
		b.Fatal(err)
	}
	cookie := benchSession(b, h)
	deep := "before=" + strconv.FormatInt(time.Now().Add(-5000*time.Second).UnixMicro(), 10) + ".ws_zzzzzzzzzzzzzzzz"
	paths := map[string]string{"first-ms": "/app/workspaces", "deep-ms": "/app/workspaces?" + deep,
		"filtered-ms": "/app/workspaces?state=failed"}
	took := map[string][]time.Duration{}
	b.ResetTimer()
	for range b.N {
		for name, path := range paths {
			req, _ := http.NewRequest("GET", h.URL+path, nil)
			req.Header.Set("Cookie", cookie)
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%s: %v %v", path, resp, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			took[name] = append(took[name], time.Since(start))
		}
	}
	b.StopTimer()
	for name, d := range took {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, name)
	}
}

// benchSession signs a member in with a one-time link (the hub must accept them) and
// returns the session's cookie, as a request header's value.
func benchSession(b *testing.B, h *hubtest.Hub) string {
	b.Helper()
	ctx := context.Background()
	email, _ := core.NewIdentity(core.IdentityEmail, "bench@example.com")
	if _, err := h.Service.Admin.AddMember(ctx, h.Account.ID, email, core.RoleMember, "Bench"); err != nil {
		b.Fatal(err)
	}
	link, err := h.Service.Admin.SignInLink(ctx, h.Account.ID, email)
	if err != nil {
		b.Fatal(err)
	}
	token := link.Token
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noFollow.Get(h.URL + "/app/signin/link?token=" + token)
	if err != nil {
		b.Fatal(err)
	}
	res.Body.Close()
	cookie, _, _ := strings.Cut(res.Header.Get("Set-Cookie"), ";")
	return cookie
}
