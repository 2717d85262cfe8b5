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
// and the template; beside it the same data through the API.
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
	// The same conversation through the API beside it: the workspace and its 200
	// messages, what a script reads to show the same.
	measure(b, h, []timed{
		{"page", "/app/workspaces/" + id, cookie},
		{"api", "/v1/api/workspaces/" + id, ""},
		{"api-messages", "/v1/api/workspaces/" + id + "/messages?limit=200", ""},
	})
}

// timed is a GET measured in a benchmark: its metric's name, its path, and the app's
// session cookie ("": the API with the hub's key).
type timed struct{ name, path, cookie string }

// measure GETs each path b.N times, in turn, and reports each one's median and 95th
// percentile (<name>-p50-ms, <name>-p95-ms): the server's time on loopback, as a page's
// reader waits for it.
func measure(b *testing.B, h *hubtest.Hub, gets []timed) {
	b.Helper()
	took := make([][]time.Duration, len(gets))
	b.ResetTimer()
	for range b.N {
		for i, g := range gets {
			req, _ := http.NewRequest("GET", h.URL+g.path, nil)
			if g.cookie != "" {
				req.Header.Set("Cookie", g.cookie)
			} else {
				req.Header.Set("Authorization", "Bearer "+h.Key)
			}
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%s: %v %v", g.path, resp, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			took[i] = append(took[i], time.Since(start))
		}
	}
	b.StopTimer()
	for i, d := range took {
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, gets[i].name+"-p50-ms")
		b.ReportMetric(float64(d[min(len(d)-1, len(d)*95/100)].Microseconds())/1000, gets[i].name+"-p95-ms")
	}
}

// BenchmarkWorkspaceList10000 draws the workspaces list of an account holding 10,000
// of them: the newest page, a page far back by its cursor, and a filter that matches
// few, and beside them the API's list, which holds every workspace. Keyset paging
// keeps the pages what a 10-workspace account costs.
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
	measure(b, h, []timed{
		{"first", "/app/workspaces", cookie},
		{"deep", "/app/workspaces?" + deep, cookie},
		{"filtered", "/app/workspaces?state=failed", cookie},
		{"api-all", "/v1/api/workspaces", ""}, // the contract lists them all at once (3 MB)
	})
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
