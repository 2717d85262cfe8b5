// Package turns_test runs a real hub (PostgreSQL, the local provider, the agent
// sandbox) through its API: turns and their messages and events, commits,
// pushes and their authors, and turns of the real agent CLIs.
package turns_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

func TestTurnRunsToSettledReplyAndCommit(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "write hello")
	ws := hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	if ws["state"] != "ready" || ws["runtimeState"] != "online" || ws["startupPhase"] != "running" {
		t.Fatalf("expected ready/online/running, got %v", ws)
	}
	lt, _ := ws["lastTurn"].(map[string]any)
	if lt == nil || lt["outcome"] != "completed" {
		t.Fatalf("expected lastTurn completed, got %v", ws["lastTurn"])
	}
	msgs, tf := hubtest.Messages(t, h, id)
	want := []hubtest.Msg{
		{Seq: 1, Role: "user", Text: "write hello", Status: "settled", TurnID: lt["turnId"].(string), DeliveredAt: true},
		{Seq: 2, Role: "assistant", Text: "wrote hello.txt", Status: "settled", Outcome: "completed", TurnID: lt["turnId"].(string)},
	}
	if len(msgs) != 2 || msgs[0] != want[0] || msgs[1] != want[1] || tf != nil {
		t.Fatalf("expected %+v and no turnFailure, got %+v %v", want, msgs, tf)
	}
	checkout := filepath.Join(h.Config.DataDir, "workspaces", id, "checkout")
	branch := ws["branch"].(string)
	if got := hubtest.Git(t, checkout, "rev-parse", "--abbrev-ref", "HEAD"); got != branch {
		t.Fatalf("expected the checkout on %s, got %s", branch, got)
	}
	// The commit's subject is the prompt's first line; its body names the turn.
	if got := hubtest.Git(t, checkout, "log", "-1", "--format=%s"); got != msgs[0].Text {
		t.Fatalf("expected the commit's subject to be the prompt %q, got %q", msgs[0].Text, got)
	}
	if got := hubtest.Git(t, checkout, "log", "-1", "--format=%B", "--name-only"); !strings.Contains(got, "wshub turn "+lt["turnId"].(string)) || !strings.Contains(got, "hello.txt") {
		t.Fatalf("expected a commit of hello.txt for the turn, got %q", got)
	}
}

func TestMessagesSentDuringASlowTurnAreAnsweredInOrder(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "sleep 1")
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["agentStatus"] == "working" })
	for _, text := range []string{"one", "two", "three"} {
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": text}).Expect(t, 200, "")
	}
	hubtest.WaitFor(t, h, id, "idle after four turns", hubtest.IdleAfterTurns(4))
	msgs, _ := hubtest.Messages(t, h, id)
	var replies []string
	for _, m := range msgs {
		if m.Role == "assistant" {
			replies = append(replies, m.Text)
		}
	}
	want := "slept 1|echo: one|echo: two|echo: three"
	if strings.Join(replies, "|") != want {
		t.Fatalf("expected replies %q in order, got %q", want, strings.Join(replies, "|"))
	}
}

func TestFailingAndMissingAgents(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "fail now")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	msgs, tf := hubtest.Messages(t, h, id)
	if msgs[1].Outcome != "error" || tf == nil || tf["code"] != "agent_error" || tf["agent"] != "agent_1" ||
		!strings.Contains(tf["message"].(string), "tripped over something") || tf["turnId"] != msgs[1].TurnID {
		t.Fatalf("expected an error turn with agent_error and the stderr text, got %+v %v", msgs, tf)
	}

	// agent_4 (grok) has no command bound and no program on PATH here.
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_4", "model": "m", "prompt": "hi"}).Expect(t, 201, "")
	id = r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	_, tf = hubtest.Messages(t, h, id)
	if tf == nil || tf["code"] != "agent_not_installed" || tf["agent"] != "agent_4" {
		t.Fatalf("expected agent_not_installed for agent_4, got %v", tf)
	}
}

func TestLongReplyIsCut(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "big")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	msgs, _ := hubtest.Messages(t, h, id)
	if n := len([]rune(msgs[1].Text)); n != core.MaxReplyChars {
		t.Fatalf("expected the reply cut to %d characters, got %d", core.MaxReplyChars, n)
	}
}

func TestAttachmentsReachTheAgent(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "")
	up := h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("line of notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	assetID := up.Body["asset"].(map[string]any)["assetId"].(string)
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "attachments", "attachments": []string{assetID}}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	msgs, _ := hubtest.Messages(t, h, id)
	want := ".context/files/" + assetID + "-notes.txt=line of notes"
	if msgs[1].Text != want {
		t.Fatalf("expected the agent to read %q, got %q", want, msgs[1].Text)
	}
	checkout := filepath.Join(h.Config.DataDir, "workspaces", id, "checkout")
	if out := hubtest.Git(t, checkout, "status", "--porcelain"); out != "" {
		t.Fatalf("expected attachments kept out of the branch, git status says %q", out)
	}
}

func TestTurnTimeoutInterrupts(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { c.TurnTimeout = 500 * time.Millisecond }))
	id := hubtest.CreateWorkspace(t, h, "sleep 20")
	ws := hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	if ws["lastTurn"].(map[string]any)["outcome"] != "interrupted" {
		t.Fatalf("expected the timed-out turn interrupted, got %v", ws["lastTurn"])
	}
}

func TestIdlePauseResumeArchiveDelete(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "hello")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	ctx := context.Background()
	cfg := core.LifecycleConfig{IdleTimeout: time.Nanosecond}
	if moved, err := h.Service.Sweeps.SweepLifecycle(ctx, cfg, time.Now()); err != nil || moved != 1 {
		t.Fatalf("expected the idle sweep to move one workspace, got %d, %v", moved, err)
	}
	hubtest.WaitFor(t, h, id, "paused", func(ws map[string]any) bool { return ws["state"] == "paused" })

	r := h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "again"}).Expect(t, 200, "")
	if r.Body["resumeTriggered"] != true {
		t.Fatalf("expected resumeTriggered, got %s", r.Raw)
	}
	r = h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "and again"}).Expect(t, 200, "")
	if r.Body["resumeTriggered"] != false {
		t.Fatalf("expected only the first message to resume, got %s", r.Raw)
	}
	hubtest.WaitFor(t, h, id, "ready and idle after three turns", hubtest.IdleAfterTurns(3))

	if _, err := h.Service.Admin.ArchiveWorkspace(ctx, id); err != nil {
		t.Fatalf("archive: %v", err)
	}
	hubtest.WaitFor(t, h, id, "archived", func(ws map[string]any) bool { return ws["state"] == "archived" })
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "hi"}).Expect(t, 409, "workspace_not_accepting_messages")

	if _, err := h.Service.Admin.UnarchiveWorkspace(ctx, id); err != nil {
		t.Fatalf("unarchive: %v", err)
	}
	hubtest.WaitFor(t, h, id, "ready again", func(ws map[string]any) bool { return ws["state"] == "ready" })

	if _, err := h.Service.Admin.DeleteWorkspace(ctx, id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	hubtest.WaitDeleted(t, h, id)
}

func TestArchiveInterruptsARunningTurn(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { c.LeaseFor = 600 * time.Millisecond }))
	id := hubtest.CreateWorkspace(t, h, "sleep 35") // a length no other test's agent sleeps, to find its process
	hubtest.WaitFor(t, h, id, "working", func(ws map[string]any) bool { return ws["state"] == "ready" && ws["agentStatus"] == "working" })
	eventually.Eventually(t, time.Minute, "the agent started", func() bool { return hubtest.AgentSleeping("35") })
	if _, err := h.Service.Admin.ArchiveWorkspace(context.Background(), id); err != nil {
		t.Fatalf("archive: %v", err)
	}
	ws := hubtest.WaitFor(t, h, id, "archived", func(ws map[string]any) bool { return ws["state"] == "archived" })
	if lt, _ := ws["lastTurn"].(map[string]any); lt == nil || lt["outcome"] != "interrupted" {
		t.Fatalf("expected the running turn interrupted, got %v", ws["lastTurn"])
	}
}

func TestBadBaseRefFailsTheWorkspace(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "baseRef": "no-such-branch",
		"prompt": "never answered"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	ws := hubtest.WaitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	if ws["statusCode"] != "setup_failed:base_ref_not_found" || ws["startupPhase"] != "failed" {
		t.Fatalf("expected setup_failed:base_ref_not_found, got %v", ws)
	}
	// The reason is kept with the workspace, in words (before: the hub's log only).
	if d, _ := ws["statusDetail"].(string); !strings.Contains(d, `"no-such-branch"`) || strings.Contains(d, h.Config.DataDir) {
		t.Fatalf("expected statusDetail to name the missing baseRef and no host path, got %q", d)
	}
	// The prompt fails with the workspace, at once (before: pending until it expired
	// 24 hours later), and the workspace is not "working" on it.
	if msgs, _ := hubtest.Messages(t, h, id); len(msgs) != 1 || msgs[0].Status != "failed" || ws["agentStatus"] == "working" {
		t.Fatalf("expected the prompt failed with the workspace and the agent not working, got %+v, agentStatus %v", msgs, ws["agentStatus"])
	}
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "hi"}).Expect(t, 409, "workspace_not_accepting_messages")
}

func TestSweepExpiresAndFailsStrandedMessages(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t) // no worker: messages stay pending until the sweep
	ctx := context.Background()
	old := hubtest.CreateWorkspace(t, h, "too old")
	fresh := hubtest.CreateWorkspace(t, h, "fresh")
	stranded := hubtest.CreateWorkspace(t, h, "stranded")
	db := h.PG().DB()
	if _, err := db.Exec(`UPDATE messages SET created_at = now() - interval '25 hours' WHERE workspace_id = $1`, old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE workspace_id = $1`, stranded); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE workspaces SET state = 'failed' WHERE id = $1`, stranded); err != nil {
		t.Fatal(err)
	}
	tick := time.Now()
	expired, failed, err := h.Service.Sweeps.SweepMessages(ctx, tick)
	if err != nil || expired != 1 || failed != 1 {
		t.Fatalf("expected 1 expired and 1 failed, got %d, %d, %v", expired, failed, err)
	}
	for id, want := range map[string]string{old: "expired", fresh: "pending", stranded: "failed"} {
		if msgs, _ := hubtest.Messages(t, h, id); msgs[0].Status != want {
			t.Errorf("workspace %s: expected its message %s, got %s", id, want, msgs[0].Status)
		}
	}
	// The same tick does not run twice (another replica, or a retry).
	if _, err := db.Exec(`UPDATE messages SET status = 'pending' WHERE workspace_id = $1`, old); err != nil {
		t.Fatal(err)
	}
	if expired, _, err := h.Service.Sweeps.SweepMessages(ctx, tick); err != nil || expired != 0 {
		t.Fatalf("expected a repeated tick to do nothing, got %d expired, %v", expired, err)
	}
	if expired, _, err := h.Service.Sweeps.SweepMessages(ctx, tick.Add(time.Minute)); err != nil || expired != 1 {
		t.Fatalf("expected the next tick to run, got %d expired, %v", expired, err)
	}
}

func TestOperatorLifecycleRefusals(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	ctx := context.Background()
	id := hubtest.CreateWorkspace(t, h, "")
	if _, err := h.Service.Admin.ArchiveWorkspace(ctx, id); core.ErrorCode(err) != core.CodeWorkspaceNotAcceptingMessages {
		t.Fatalf("expected a queued workspace not to be archivable, got %v", err)
	}
	if _, err := h.Service.Admin.UnarchiveWorkspace(ctx, id); core.ErrorCode(err) != core.CodeWorkspaceNotAcceptingMessages {
		t.Fatalf("expected only archived workspaces to unarchive, got %v", err)
	}
	if _, err := h.Service.Admin.ArchiveWorkspace(ctx, "ws_0000000000000000"); core.ErrorCode(err) != core.CodeWorkspaceNotFound {
		t.Fatalf("expected not found, got %v", err)
	}
	ws, err := h.Service.Admin.DeleteWorkspace(ctx, id)
	if err != nil || ws.State != core.StateDeleting {
		t.Fatalf("expected deleting, got %v, %v", ws, err)
	}
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "hi"}).Expect(t, 409, "workspace_not_accepting_messages")
}

// TestNotifyWakesTheWorker sets the poll to an hour: only NOTIFY from create and send
// can get the turns run in time.
func TestNotifyWakesTheWorker(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { c.WorkerPoll = time.Hour }))
	time.Sleep(300 * time.Millisecond) // sleep: nothing outside the worker marks its first claim; a create before it is claimed by it, not woken, and the test passes less strictly
	id := hubtest.CreateWorkspace(t, h, "hello")
	hubtest.WaitFor(t, h, id, "the first turn", hubtest.IdleAfterTurns(1))
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "again"}).Expect(t, 200, "")
	hubtest.WaitFor(t, h, id, "the second turn", hubtest.IdleAfterTurns(2))
}

func TestTurnCommitsArePushedWhenTheProjectAsks(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	p, upstream := hubtest.PushingProject(t, h)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m", "prompt": "write pushed"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)
	hubtest.WaitFor(t, h, ws["workspaceId"].(string), "idle", hubtest.IdleAfterTurns(1))
	if got := hubtest.Git(t, upstream, "show", ws["branch"].(string)+":pushed.txt"); got != "pushed" {
		t.Fatalf("expected pushed.txt on branch %s upstream, got %q", ws["branch"], got)
	}
}

func TestSweepArchivesLongPausedAndDeletesLongArchived(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	ctx := context.Background()
	paused, archived := hubtest.CreateWorkspace(t, h, "one"), hubtest.CreateWorkspace(t, h, "two")
	hubtest.WaitFor(t, h, paused, "idle", hubtest.IdleAfterTurns(1))
	hubtest.WaitFor(t, h, archived, "idle", hubtest.IdleAfterTurns(1))
	db := h.PG().DB()
	for id, state := range map[string]string{paused: "paused", archived: "archived"} {
		if _, err := db.Exec(`UPDATE workspaces SET state = $2, state_changed_at = now() - interval '10 days' WHERE id = $1`, id, state); err != nil {
			t.Fatal(err)
		}
	}
	cfg := core.LifecycleConfig{IdleTimeout: time.Hour, ArchiveAfter: 7 * 24 * time.Hour, DeleteAfter: 9 * 24 * time.Hour}
	if moved, err := h.Service.Sweeps.SweepLifecycle(ctx, cfg, time.Now()); err != nil || moved != 2 {
		t.Fatalf("expected two workspaces moved, got %d, %v", moved, err)
	}
	hubtest.WaitFor(t, h, paused, "archived", func(ws map[string]any) bool { return ws["state"] == "archived" })
	eventually.Eventually(t, 20*time.Second, "the long-archived workspace deleted (404)", func() bool {
		return h.Call("GET", "/v1/api/workspaces/"+archived, h.Key, nil).Status == 404
	})
	if _, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", archived)); !os.IsNotExist(err) {
		t.Fatalf("expected the deleted workspace's checkout removed, stat says %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", paused, "checkout", ".git")); err != nil {
		t.Fatalf("expected the archived workspace's checkout kept: %v", err)
	}
}

// A paused workspace whose machine is gone fails on resume, with a reason the owner
// can read (the hub's paths stay in its log), and the message that woke it fails too.
func TestResumeOfALostMachineFailsWithAReason(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "hello")
	hubtest.WaitFor(t, h, id, "idle", hubtest.IdleAfterTurns(1))
	if moved, err := h.Service.Sweeps.SweepLifecycle(context.Background(), core.LifecycleConfig{IdleTimeout: time.Nanosecond}, time.Now()); err != nil || moved != 1 {
		t.Fatalf("expected the idle sweep to pause the workspace, got %d, %v", moved, err)
	}
	hubtest.WaitFor(t, h, id, "paused", func(ws map[string]any) bool { return ws["state"] == "paused" })
	if err := os.RemoveAll(filepath.Join(h.Config.DataDir, "workspaces", id)); err != nil {
		t.Fatal(err)
	}
	h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": "wake up"}).Expect(t, 200, "")
	ws := hubtest.WaitFor(t, h, id, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })
	detail, _ := ws["statusDetail"].(string)
	if ws["statusCode"] != "machine_lost" || !strings.Contains(detail, "could not be resumed") || strings.Contains(detail, h.Config.DataDir) {
		t.Fatalf("expected machine_lost with a plain reason, got %v / %q", ws["statusCode"], detail)
	}
	msgs, _ := hubtest.Messages(t, h, id)
	if last := msgs[len(msgs)-1]; last.Text != "wake up" || last.Status != "failed" {
		t.Fatalf("expected the waking message failed, got %+v", last)
	}
}

// Deleting a workspace deletes its attachments' bytes with its checkout.
func TestDeleteRemovesAttachmentBlobs(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	id := hubtest.CreateWorkspace(t, h, "")
	h.Call("POST", "/v1/api/workspaces/"+id+"/attachments", h.Key, []byte("notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "n.txt").Expect(t, 201, "")
	var key string
	if err := h.PG().DB().Get(&key, `SELECT blob_key FROM assets WHERE workspace_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(h.Config.DataDir, "assets", filepath.FromSlash(key))
	if _, err := os.Stat(blob); err != nil {
		t.Fatalf("expected the attachment stored at %s: %v", blob, err)
	}
	hubtest.WaitFor(t, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
	if _, err := h.Service.Admin.DeleteWorkspace(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	eventually.Eventually(t, 20*time.Second, "the attachment's bytes deleted with the workspace", func() bool {
		_, err := os.Stat(blob)
		return errors.Is(err, os.ErrNotExist)
	})
}
