package hub_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// The `process` provider: every workspace's turns run in a real `wshub runtime`
// process that reaches the hub over the runtime API only. These tests are the local
// provider's runtime tests (runtime_test.go) run across that process boundary, plus
// what only a separate process can meet: being killed, and losing the network.

func startProcessHub(t *testing.T, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	h := startRuntime(t, append([]hubtest.Option{hubtest.WithProcessProvider(t)}, opts...)...)
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

func createOn(t testing.TB, h *hubtest.Hub, provider, prompt string, extra ...any) string {
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

func send(t testing.TB, h *hubtest.Hub, id, text string, extra ...any) {
	t.Helper()
	body := map[string]any{"text": text}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, body).Expect(t, 200, "")
}

// runtimePID is the pid of the workspace's runtime process, from its pid file.
func runtimePID(t *testing.T, h *hubtest.Hub, id string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(h.Config.DataDir, "machines", id, "runtime.pid"))
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && syscall.Kill(pid, 0) == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no runtime process for %s", id)
	return 0
}

func TestProcessRuntimeRunsTurnsLikeTheLocalOne(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	h.Call("GET", "/v1/api/providers", h.Key, nil).Expect(t, 200, "")
	id := createOn(t, h, "process", "write hello")
	ws := waitFor(t, h, id, "idle after one turn", idleAfterTurns(1))
	if ws["state"] != "ready" || ws["runtimeState"] != "online" || ws["startupPhase"] != "running" || ws["providerId"] != "process" {
		t.Fatalf("expected ready/online/running on process, got %v", ws)
	}
	if got := replies(t, h, id); strings.Join(got, "|") != "completed: wrote hello.txt" {
		t.Fatalf("expected the agent's reply, got %q", got)
	}
	// The turn's commit is on the branch in the machine's checkout and in the hub's
	// copy of the branch (which a new machine would check out).
	branch := ws["branch"].(string)
	checkout := filepath.Join(h.Config.DataDir, "machines", id, "checkout")
	copyDir := filepath.Join(h.Config.DataDir, "branches", id+".git")
	for _, dir := range []string{checkout, copyDir} {
		if got := hubtest.Git(t, dir, "show", branch+":hello.txt"); got != "hello" {
			t.Fatalf("expected hello.txt on %s in %s, got %q", branch, dir, got)
		}
	}
	if got := hubtest.Git(t, checkout, "log", "-1", "--format=%s"); got != "write hello" {
		t.Fatalf("expected the prompt as the commit's subject, got %q", got)
	}

	// Messages sent during a slow turn are answered in order, one turn at a time.
	send(t, h, id, "sleep 1")
	waitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	for _, text := range []string{"one", "two", "fail now"} {
		send(t, h, id, text)
	}
	waitFor(t, h, id, "idle after five turns", idleAfterTurns(5))
	got := replies(t, h, id)
	want := "completed: wrote hello.txt|completed: slept 1|completed: echo: one|completed: echo: two|error: "
	if !strings.HasPrefix(strings.Join(got, "|"), want) {
		t.Fatalf("expected replies %q in order, got %q", want, got)
	}
	_, tf := messages(t, h, id)
	if tf == nil || tf["code"] != "agent_error" || !strings.Contains(tf["message"].(string), "tripped over something") {
		t.Fatalf("expected the failing agent's turnFailure, got %v", tf)
	}

	// Attachments reach the agent; a long reply is cut as the local runtime cuts it.
	up := h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("line of notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	assetID := up.Body["asset"].(map[string]any)["assetId"].(string)
	send(t, h, id, "attachments", "attachments", []string{assetID})
	send(t, h, id, "big")
	waitFor(t, h, id, "idle after seven turns", idleAfterTurns(7))
	got = replies(t, h, id)
	if want := "completed: .context/files/" + assetID + "-notes.txt=line of notes"; got[5] != want {
		t.Fatalf("expected the agent to read %q, got %q", want, got[5])
	}
	if n := len([]rune(strings.TrimPrefix(got[6], "completed: "))); n != core.MaxReplyChars {
		t.Fatalf("expected the reply cut to %d characters, got %d", core.MaxReplyChars, n)
	}

	// Pause stops the machine (its process), a message resumes it from its disk.
	pid := runtimePID(t, h, id)
	ctx := context.Background()
	if moved, err := h.Service.Sweeps.SweepLifecycle(ctx, core.LifecycleConfig{IdleTimeout: time.Nanosecond}, time.Now()); err != nil || moved != 1 {
		t.Fatalf("expected the idle sweep to pause the workspace, got %d, %v", moved, err)
	}
	ws = waitFor(t, h, id, "paused", func(ws map[string]any) bool { return ws["state"] == "paused" })
	if ws["runtimeState"] != "offline" {
		t.Fatalf("expected a paused workspace's runtime offline, got %v", ws["runtimeState"])
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("expected the paused workspace's runtime process %d gone", pid)
	}
	send(t, h, id, "write again")
	waitFor(t, h, id, "idle after eight turns", idleAfterTurns(8))
	if got := hubtest.Git(t, copyDir, "show", branch+":hello.txt"); got != "hello" {
		t.Fatalf("expected the branch kept across the pause, got %q", got)
	}

	// Archive interrupts a running turn; unarchive brings the machine back; delete
	// removes it.
	send(t, h, id, "sleep 30")
	waitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	time.Sleep(300 * time.Millisecond)
	if _, err := h.Service.Admin.ArchiveWorkspace(ctx, id); err != nil {
		t.Fatalf("archive: %v", err)
	}
	ws = waitFor(t, h, id, "archived", func(ws map[string]any) bool { return ws["state"] == "archived" })
	if lt, _ := ws["lastTurn"].(map[string]any); lt == nil || lt["outcome"] != "interrupted" {
		t.Fatalf("expected the running turn interrupted by the archive, got %v", ws["lastTurn"])
	}
	if _, err := h.Service.Admin.UnarchiveWorkspace(ctx, id); err != nil {
		t.Fatalf("unarchive: %v", err)
	}
	waitFor(t, h, id, "ready again", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["runtimeState"] == "online" })
	if _, err := h.Service.Admin.DeleteWorkspace(ctx, id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	waitDeleted(t, h, id)
	for _, dir := range []string{filepath.Join(h.Config.DataDir, "machines", id), copyDir} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("expected %s removed with the workspace, got %v", dir, err)
		}
	}
}

func TestProcessRuntimePushesThroughTheHub(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	p, upstream := pushingProject(t, h)
	id := createOn(t, h, "process", "write pushed", "projectId", p.ID)
	ws := waitFor(t, h, id, "idle", idleAfterTurns(1))
	if got := hubtest.Git(t, upstream, "show", ws["branch"].(string)+":pushed.txt"); got != "pushed" {
		t.Fatalf("expected pushed.txt on branch %s upstream, got %q", ws["branch"], got)
	}
	if got := replies(t, h, id); len(got) != 1 || !strings.Contains(got[0], "Pushed to `"+ws["branch"].(string)+"`") {
		t.Fatalf("expected the reply to say the branch was pushed, got %q", got)
	}
}

func TestProcessRuntimeKilledMidTurnEndsItInterrupted(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	id := createOn(t, h, "process", "sleep 30")
	waitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["agentStatus"] == "working" })
	pid := runtimePID(t, h, id)
	time.Sleep(500 * time.Millisecond) // the agent is running
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The provider starts the runtime again; its hello ends the turn its predecessor
	// left, and the next message is answered.
	ws := waitFor(t, h, id, "the killed turn ended", idleAfterTurns(1))
	if lt := ws["lastTurn"].(map[string]any); lt["outcome"] != "interrupted" {
		t.Fatalf("expected the killed turn interrupted, got %v", lt)
	}
	send(t, h, id, "after")
	waitFor(t, h, id, "idle after two turns", idleAfterTurns(2))
	got := replies(t, h, id)
	if len(got) != 2 || !strings.HasPrefix(got[0], "interrupted: ") || got[1] != "completed: echo: after" {
		t.Fatalf("expected the killed turn interrupted and the next answered, got %q", got)
	}
}

func TestProcessRuntimeLosesNothingToANetworkCut(t *testing.T) {
	t.Parallel()
	proxy := hubtest.NewTCPProxy(t)
	h := startProcessHub(t, hubtest.WithConfig(func(c *hub.Config) { c.RuntimeHubURL = "http://" + proxy.Addr() }))
	proxy.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	id := createOn(t, h, "process", "sleep 2")
	waitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["agentStatus"] == "working" })
	// Cut while the agent works and the runtime waits on nothing but its heartbeat,
	// then again while it reports: both the report and the long polls are retried.
	for i := 0; i < 3; i++ {
		time.Sleep(700 * time.Millisecond)
		proxy.Cut()
		send(t, h, id, "during cut "+strconv.Itoa(i))
		time.Sleep(700 * time.Millisecond)
		proxy.Restore()
	}
	waitFor(t, h, id, "idle after four turns", idleAfterTurns(4))
	got := strings.Join(replies(t, h, id), "|")
	want := "completed: slept 2|completed: echo: during cut 0|completed: echo: during cut 1|completed: echo: during cut 2"
	if got != want {
		t.Fatalf("expected every turn answered once in order, got %q", got)
	}
}

func TestRuntimeAPIRefusesUnknownTokens(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	for _, auth := range []string{"", "Bearer wsrt_unknown0000000000000000", "Basic abc"} {
		r := h.Call("POST", "/internal/runtime/v1/hello", "", nil, "Authorization", auth, "X-Wshub-Runtime-Session", "session-0001")
		if r.Status != 401 || r.Code() != "runtime_token_invalid" {
			t.Fatalf("%q: expected 401 runtime_token_invalid, got %d %s", auth, r.Status, r.Raw)
		}
	}
}

func TestProcessRuntimeBadBaseRefFailsTheWorkspace(t *testing.T) {
	t.Parallel()
	h := startProcessHub(t)
	id := createOn(t, h, "process", "hello", "baseRef", "no-such-branch")
	ws := waitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	if ws["statusCode"] != "setup_failed:base_ref_not_found" || ws["runtimeState"] != "offline" {
		t.Fatalf("expected setup_failed:base_ref_not_found and the runtime offline, got %v", ws)
	}
	if got := replies(t, h, id); len(got) != 0 {
		t.Fatalf("expected no turn, got %q", got)
	}
	msgs, _ := messages(t, h, id)
	if len(msgs) != 1 || msgs[0].Status != "failed" {
		t.Fatalf("expected the first message failed with the workspace, got %+v", msgs)
	}
}
