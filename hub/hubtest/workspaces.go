package hubtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/procgroup"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// StartRuntime runs a hub with its worker and agent_1 bound to the fake agent.
func StartRuntime(t *testing.T, opts ...Option) *Hub {
	t.Helper()
	return Start(t, append([]Option{WithJobs(), WithAgentCommand("agent_1", FakeAgent(t))}, opts...)...)
}

// CreateWorkspace starts a workspace for agent_1 with a first prompt (none when "").
func CreateWorkspace(t testing.TB, h *Hub, prompt string) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "test-model"}
	if prompt != "" {
		body["prompt"] = prompt
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["workspaceId"].(string)
}

// WaitFor polls the workspace until cond holds, failing after a deadline.
func WaitFor(t testing.TB, h *Hub, id, what string, cond func(ws map[string]any) bool) map[string]any {
	t.Helper()
	return WaitForAs(t, h, h.Key, id, what, cond)
}

// WaitForAs is WaitFor as key's account sees the workspace.
func WaitForAs(t testing.TB, h *Hub, key, id, what string, cond func(ws map[string]any) bool) map[string]any {
	t.Helper()
	// Generous: benchmarks wait for hundreds of turns.
	return eventually.Value(t, 2*time.Minute, "workspace "+id+": "+what, func() (map[string]any, error) {
		r := h.Call("GET", "/v1/api/workspaces/"+id, key, nil)
		if r.Status != 200 {
			return nil, fmt.Errorf("status %d", r.Status)
		}
		ws := r.Body["workspace"].(map[string]any)
		if !cond(ws) {
			return nil, fmt.Errorf("last seen %v", ws)
		}
		return ws, nil
	})
}

// IdleAfterTurns holds once the workspace is idle after its nth turn (2n messages).
func IdleAfterTurns(n int) func(map[string]any) bool {
	return func(ws map[string]any) bool {
		return ws["agentStatus"] == "idle" && ws["latestSeq"] == float64(2*n)
	}
}

// Msg is one message of a workspace, as its messages page lists it.
type Msg struct {
	Seq                   int
	Role, Text, Status    string
	Outcome, TurnID       string
	DeliveredAt, Attached bool
}

// Messages lists the workspace's messages, with the page's whole body.
func Messages(t *testing.T, h *Hub, id string) ([]Msg, map[string]any) {
	t.Helper()
	r := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	var out []Msg
	for _, raw := range r.Body["messages"].([]any) {
		m := raw.(map[string]any)
		s := func(k string) string { v, _ := m[k].(string); return v }
		_, delivered := m["deliveredAt"]
		_, attached := m["attachments"]
		out = append(out, Msg{Seq: int(m["seq"].(float64)), Role: s("role"), Text: s("text"), Status: s("status"),
			Outcome: s("outcome"), TurnID: s("turnId"), DeliveredAt: delivered, Attached: attached})
	}
	tf, _ := r.Body["turnFailure"].(map[string]any)
	return out, tf
}

// WaitDeleted waits for a deleted workspace to answer 404.
func WaitDeleted(t *testing.T, h *Hub, id string) {
	t.Helper()
	eventually.Eventually(t, 20*time.Second, "the deleted workspace to answer 404", func() bool {
		return h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil).Status == 404
	})
}

// PushingProject adds a ready project that pushes turns' commits to a new upstream.
func PushingProject(t *testing.T, h *Hub) (*core.Project, string) {
	t.Helper()
	ctx := context.Background()
	upstream := GitRepo(t)
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: upstream, Push: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		t.Fatalf("expected the project ready, got %s %v", p.State, err)
	}
	return p, upstream
}

// StartProcessHub is StartRuntime with the process provider: each workspace's turns
// run in a real `wshub runtime` process. A failed test shows what its runtimes said.
func StartProcessHub(t *testing.T, opts ...Option) *Hub {
	t.Helper()
	h := StartRuntime(t, append([]Option{WithProcessProvider(t)}, opts...)...)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// A failed test shows what its runtimes said.
		logs, _ := filepath.Glob(filepath.Join(h.Config.DataDir, "machines", "*", "runtime.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b[max(0, len(b)-4000):])
		}
	})
	return h
}

// CreateOn starts a workspace on provider, extra being more body fields (name, value).
func CreateOn(t testing.TB, h *Hub, provider, prompt string, extra ...any) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "test-model", "providerId": provider}
	if prompt != "" {
		body["prompt"] = prompt
	}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["workspaceId"].(string)
}

// Send sends text to the workspace, extra being more body fields (name, value).
func Send(t testing.TB, h *Hub, id, text string, extra ...any) {
	t.Helper()
	body := map[string]any{"text": text}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, body).Expect(t, 200, "")
}

// RuntimePID is the pid of the workspace's runtime process, from its pid file.
func RuntimePID(t *testing.T, h *Hub, id string) int {
	t.Helper()
	return eventually.Value(t, 30*time.Second, "a runtime process for "+id, func() (int, error) {
		b, err := os.ReadFile(filepath.Join(h.Config.DataDir, "machines", id, "runtime.pid"))
		if err != nil {
			return 0, err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && !procgroup.Alive(pid) {
			err = fmt.Errorf("runtime %d is not running", pid)
		}
		return pid, err
	})
}

// Replies lists the workspace's assistant messages as "outcome: text".
func Replies(t *testing.T, h *Hub, id string) []string {
	t.Helper()
	msgs, _ := Messages(t, h, id)
	var out []string
	for _, m := range msgs {
		if m.Role == "assistant" {
			out = append(out, m.Outcome+": "+m.Text)
		}
	}
	return out
}
