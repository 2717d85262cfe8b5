// Package runtimeapi_test runs turns across the runtime API: the process provider's
// real `wshub runtime` processes, a runtime in the test's own process, a runtime that
// loses its hub, hostile agents and runtimes, and approvals asked through it.
package runtimeapi_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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
// provider's runtime tests (hub/turns/runtime_test.go) run across that process
// boundary, plus what only a separate process can meet: being killed, and losing the
// network.

func TestProcessRuntimeRunsTurnsLikeTheLocalOne(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	h.Call("GET", "/v1/api/providers", h.Key, nil).Expect(t, 200, "")
	id := hubtest.CreateOn(t, h, "process", "write hello")
	ws := hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	if ws["state"] != "ready" || ws["runtimeState"] != "online" || ws["startupPhase"] != "running" || ws["providerId"] != "process" {
		t.Fatalf("expected ready/online/running on process, got %v", ws)
	}
	if got := hubtest.Replies(t, h, id); strings.Join(got, "|") != "completed: wrote hello.txt" {
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
	hubtest.Send(t, h, id, "sleep 1")
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	for _, text := range []string{"one", "two", "fail now"} {
		hubtest.Send(t, h, id, text)
	}
	hubtest.WaitFor(t, h, id, "idle after five turns", hubtest.IdleAfterTurns(5))
	got := hubtest.Replies(t, h, id)
	want := "completed: wrote hello.txt|completed: slept 1|completed: echo: one|completed: echo: two|error: "
	if !strings.HasPrefix(strings.Join(got, "|"), want) {
		t.Fatalf("expected replies %q in order, got %q", want, got)
	}
	_, tf := hubtest.Messages(t, h, id)
	if tf == nil || tf["code"] != "agent_error" || !strings.Contains(tf["message"].(string), "tripped over something") {
		t.Fatalf("expected the failing agent's turnFailure, got %v", tf)
	}

	// Attachments reach the agent; a long reply is cut as the local runtime cuts it.
	up := h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("line of notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	assetID := up.Body["asset"].(map[string]any)["assetId"].(string)
	hubtest.Send(t, h, id, "attachments", "attachments", []string{assetID})
	hubtest.Send(t, h, id, "big")
	hubtest.WaitFor(t, h, id, "idle after seven turns", hubtest.IdleAfterTurns(7))
	got = hubtest.Replies(t, h, id)
	if want := "completed: .context/files/" + assetID + "-notes.txt=line of notes"; got[5] != want {
		t.Fatalf("expected the agent to read %q, got %q", want, got[5])
	}
	if n := len([]rune(strings.TrimPrefix(got[6], "completed: "))); n != core.MaxReplyChars {
		t.Fatalf("expected the reply cut to %d characters, got %d", core.MaxReplyChars, n)
	}

	// Pause stops the machine (its process), a message resumes it from its disk.
	pid := hubtest.RuntimePID(t, h, id)
	ctx := context.Background()
	if moved, err := h.Service.Sweeps.SweepLifecycle(ctx, core.LifecycleConfig{IdleTimeout: time.Nanosecond}, time.Now()); err != nil || moved != 1 {
		t.Fatalf("expected the idle sweep to pause the workspace, got %d, %v", moved, err)
	}
	ws = hubtest.WaitFor(t, h, id, "paused", func(ws map[string]any) bool { return ws["state"] == "paused" })
	if ws["runtimeState"] != "offline" {
		t.Fatalf("expected a paused workspace's runtime offline, got %v", ws["runtimeState"])
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("expected the paused workspace's runtime process %d gone", pid)
	}
	hubtest.Send(t, h, id, "write again")
	hubtest.WaitFor(t, h, id, "idle after eight turns", hubtest.IdleAfterTurns(8))
	if got := hubtest.Git(t, copyDir, "show", branch+":hello.txt"); got != "hello" {
		t.Fatalf("expected the branch kept across the pause, got %q", got)
	}

	// Archive interrupts a running turn; unarchive brings the machine back; delete
	// removes it.
	hubtest.Send(t, h, id, "sleep 33") // a length no other test's agent sleeps, to find its process
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["agentStatus"] == "working" })
	waitHolding(t, "33", true)
	if _, err := h.Service.Admin.ArchiveWorkspace(ctx, id); err != nil {
		t.Fatalf("archive: %v", err)
	}
	ws = hubtest.WaitFor(t, h, id, "archived", func(ws map[string]any) bool { return ws["state"] == "archived" })
	if lt, _ := ws["lastTurn"].(map[string]any); lt == nil || lt["outcome"] != "interrupted" {
		t.Fatalf("expected the running turn interrupted by the archive, got %v", ws["lastTurn"])
	}
	if _, err := h.Service.Admin.UnarchiveWorkspace(ctx, id); err != nil {
		t.Fatalf("unarchive: %v", err)
	}
	hubtest.WaitFor(t, h, id, "ready again", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["runtimeState"] == "online" })
	if _, err := h.Service.Admin.DeleteWorkspace(ctx, id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	hubtest.WaitDeleted(t, h, id)
	for _, dir := range []string{filepath.Join(h.Config.DataDir, "machines", id), copyDir} {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("expected %s removed with the workspace, got %v", dir, err)
		}
	}
}

func TestProcessRuntimePushesThroughTheHub(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	p, upstream := hubtest.PushingProject(t, h)
	id := hubtest.CreateOn(t, h, "process", "write pushed", "projectId", p.ID)
	ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	if got := hubtest.Git(t, upstream, "show", ws["branch"].(string)+":pushed.txt"); got != "pushed" {
		t.Fatalf("expected pushed.txt on branch %s upstream, got %q", ws["branch"], got)
	}
	if got := hubtest.Replies(t, h, id); len(got) != 1 || !strings.Contains(got[0], "Pushed to `"+ws["branch"].(string)+"`") {
		t.Fatalf("expected the reply to say the branch was pushed, got %q", got)
	}
}

// A development hub that runs turns unlimited where no cgroup can be had (make run on
// a desktop without a delegated group) tells its process runtimes the same, rather than
// have them refuse to start.
func TestADevelopmentHubsRuntimesMayRunWithoutLimitsAsItDoes(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) { c.AgentLimitsOptional = true }))
	id := hubtest.CreateOn(t, h, "process", "write optional")
	environ, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(hubtest.RuntimePID(t, h, id)), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(environ), "\x00"), "WSHUB_AGENT_LIMITS_OPTIONAL=1") {
		t.Fatalf("expected the runtime told its limits are optional, got %q", environ)
	}
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
}

func TestProcessRuntimeKilledMidTurnEndsItInterrupted(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	id := hubtest.CreateOn(t, h, "process", "sleep 34") // a length no other test's agent sleeps, to find its process
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["agentStatus"] == "working" })
	pid := hubtest.RuntimePID(t, h, id)
	waitHolding(t, "34", true)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The provider starts the runtime again; its hello ends the turn its predecessor
	// left, and the next message is answered.
	ws := hubtest.WaitFor(t, h, id, "the killed turn ended", hubtest.IdleAfterTurns(1))
	if lt := ws["lastTurn"].(map[string]any); lt["outcome"] != "interrupted" {
		t.Fatalf("expected the killed turn interrupted, got %v", lt)
	}
	hubtest.Send(t, h, id, "after")
	hubtest.WaitFor(t, h, id, "idle after two turns", hubtest.IdleAfterTurns(2))
	got := hubtest.Replies(t, h, id)
	if len(got) != 2 || !strings.HasPrefix(got[0], "interrupted: ") || got[1] != "completed: echo: after" {
		t.Fatalf("expected the killed turn interrupted and the next answered, got %q", got)
	}
}

func TestProcessRuntimeLosesNothingToANetworkCut(t *testing.T) {
	t.Parallel()
	proxy := hubtest.NewTCPProxy(t)
	h := hubtest.StartProcessHub(t, hubtest.WithConfig(func(c *hub.Config) { c.RuntimeHubURL = "http://" + proxy.Addr() }))
	proxy.SetTarget(strings.TrimPrefix(h.URL, "http://"))
	id := hubtest.CreateOn(t, h, "process", "sleep 2")
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["agentStatus"] == "working" })
	// Cut while the agent works and the runtime waits on nothing but its heartbeat,
	// then again while it reports: both the report and the long polls are retried.
	for i := 0; i < 3; i++ {
		time.Sleep(700 * time.Millisecond) // sleep: where in the turn the cut falls is the point (mid-work, mid-report)
		proxy.Cut()
		hubtest.Send(t, h, id, "during cut "+strconv.Itoa(i))
		time.Sleep(700 * time.Millisecond) // sleep: the cut's length, across a heartbeat
		proxy.Restore()
	}
	hubtest.WaitFor(t, h, id, "idle after four turns", hubtest.IdleAfterTurns(4))
	got := strings.Join(hubtest.Replies(t, h, id), "|")
	want := "completed: slept 2|completed: echo: during cut 0|completed: echo: during cut 1|completed: echo: during cut 2"
	if got != want {
		t.Fatalf("expected every turn answered once in order, got %q", got)
	}
}

func TestRuntimeAPIRefusesUnknownTokens(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	for _, auth := range []string{"", "Bearer wsrt_unknown0000000000000000", "Basic abc"} {
		r := h.Call("POST", "/internal/runtime/v1/hello", "", nil, "Authorization", auth, "X-Wshub-Runtime-Session", "session-0001")
		if r.Status != 401 || r.Code() != "runtime_token_invalid" {
			t.Fatalf("%q: expected 401 runtime_token_invalid, got %d %s", auth, r.Status, r.Raw)
		}
	}
}

func TestProcessRuntimeBadBaseRefFailsTheWorkspace(t *testing.T) {
	t.Parallel()
	h := hubtest.StartProcessHub(t)
	id := hubtest.CreateOn(t, h, "process", "hello", "baseRef", "no-such-branch")
	ws := hubtest.WaitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	if ws["statusCode"] != "setup_failed:base_ref_not_found" || ws["runtimeState"] != "offline" {
		t.Fatalf("expected setup_failed:base_ref_not_found and the runtime offline, got %v", ws)
	}
	if got := hubtest.Replies(t, h, id); len(got) != 0 {
		t.Fatalf("expected no turn, got %q", got)
	}
	msgs, _ := hubtest.Messages(t, h, id)
	if len(msgs) != 1 || msgs[0].Status != "failed" {
		t.Fatalf("expected the first message failed with the workspace, got %+v", msgs)
	}
}
