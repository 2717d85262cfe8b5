// Package environment_test runs a real hub (PostgreSQL, the local provider, the agent
// sandbox) on repositories that declare an environment: the setup before the first
// turn, its events, its failures in words, and what turns get of it.
package environment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// shellAgent runs its prompt as a shell script and replies with what it printed: a
// test says what the agent does in the prompt itself.
const shellAgent = "#!/bin/sh\nprompt=$(cat)\nsh -c \"$prompt\" 2>&1\n"

// startHub runs a hub whose agent_1 is the shell agent.
func startHub(t *testing.T, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	agent := filepath.Join(t.TempDir(), "shell-agent.sh")
	if err := os.WriteFile(agent, []byte(shellAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	return hubtest.Start(t, append([]hubtest.Option{hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", agent)}, opts...)...)
}

// repoWith makes a repository holding files (path: content) on main, connects it to
// the hub's account as a project whose turns have no network, and returns it with
// the repository's path.
func repoWith(t *testing.T, h *hubtest.Hub, files map[string]string) (*core.Project, string) {
	t.Helper()
	dir := hubtest.GitRepo(t)
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hubtest.Git(t, dir, "add", "-A")
	hubtest.Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "environment")
	p := h.NewProject(h.Account.ID, dir)
	none := core.NetworkNone
	p, err := h.Service.Admin.UpdateProject(context.Background(), core.UpdateProjectInput{ProjectID: p.ID, Network: &none})
	if err != nil {
		t.Fatal(err)
	}
	return p, dir
}

// create starts a workspace on p with a first prompt (none when "").
func create(t *testing.T, h *hubtest.Hub, p *core.Project, prompt string, extra ...string) string {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "m", "projectId": p.ID}
	if prompt != "" {
		body["prompt"] = prompt
	}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i]] = extra[i+1]
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["workspaceId"].(string)
}

// waitFor reads the workspace until cond holds (two minutes at most: a loaded
// machine's sandbox starts are slow).
func waitFor(t *testing.T, h *hubtest.Hub, id, what string, cond func(ws map[string]any) bool) map[string]any {
	t.Helper()
	return eventually.Value(t, 2*time.Minute, what, func() (map[string]any, error) {
		r := h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil)
		if r.Status != 200 {
			return nil, fmt.Errorf("status %d", r.Status)
		}
		if ws := r.Body["workspace"].(map[string]any); !cond(ws) {
			return nil, fmt.Errorf("the workspace: %v", ws)
		}
		return r.Body["workspace"].(map[string]any), nil
	})
}

func state(want string) func(map[string]any) bool {
	return func(ws map[string]any) bool { return ws["state"] == want }
}

func idleAfterTurns(n int) func(map[string]any) bool {
	return func(ws map[string]any) bool { return ws["agentStatus"] == "idle" && ws["latestSeq"] == float64(2*n) }
}

// reply is the text of the workspace's assistant message at seq.
func reply(t *testing.T, h *hubtest.Hub, id string, seq int) string {
	t.Helper()
	r := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	for _, m := range r.Body["messages"].([]any) {
		m := m.(map[string]any)
		if m["seq"] == float64(seq) {
			s, _ := m["text"].(string)
			return s
		}
	}
	t.Fatalf("no message %d in %s", seq, r.Raw)
	return ""
}

type event struct {
	Seq     int64  `json:"seq"`
	TurnID  string `json:"turnId"`
	Type    string `json:"type"`
	Tool    string `json:"tool"`
	Delta   string `json:"delta"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// events reads the workspace's events (one page is all these tests make).
func events(t *testing.T, h *hubtest.Hub, id string) []event {
	t.Helper()
	r := h.Call("GET", fmt.Sprintf("/v1/api/workspaces/%s/events?limit=200", id), h.Key, nil).Expect(t, 200, "")
	var page struct{ Events []event }
	if err := json.Unmarshal(r.Raw, &page); err != nil {
		t.Fatal(err)
	}
	return page.Events
}

// setupOutput is what the workspace's setup_output events said, joined.
func setupOutput(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "setup_output" {
			b.WriteString(e.Delta)
		}
	}
	return b.String()
}
