package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub/hubtest"
)

// TestAgentProcessesDieWithAKilledHub kills `wshub serve` with SIGKILL while its agent
// runs a detached writer (setsid, out of the turn's process group) that appends to a
// file in the checkout. Before the sandbox, such processes were re-parented to init and
// kept writing into the checkout while the next turn ran; in the sandbox they die with
// the hub (bubblewrap's --die-with-parent and the turn's PID namespace).
func TestAgentProcessesDieWithAKilledHub(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dataDir := t.TempDir()
	agent := filepath.Join(t.TempDir(), "agent.sh")
	script := "#!/bin/sh\nprompt=$(cat)\ncase \"$prompt\" in\n" +
		"spawn*) setsid sh -c 'while :; do date +%s%N >> heartbeat; sleep 0.05; done' </dev/null >/dev/null 2>&1 &\n sleep 60 ;;\n" +
		"esac\necho \"echo: $prompt\"\n"
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"DATABASE_URL=" + pgtest.NewDatabase(t), "WSHUB_DATA_DIR=" + dataDir,
		"WSHUB_CONTENT_KEY=" + hubtest.NewContentKey(t), "WSHUB_AGENT_1_COMMAND=" + agent,
		"WSHUB_LEASE_FOR=1s", "WSHUB_WORKER_POLL=200ms",
	}
	t.Setenv("DATABASE_URL", strings.TrimPrefix(env[0], "DATABASE_URL="))
	t.Setenv("WSHUB_DATA_DIR", dataDir)
	t.Setenv("WSHUB_CONTENT_KEY", strings.TrimPrefix(env[2], "WSHUB_CONTENT_KEY="))
	acct, _ := wshub(t, 0, "admin", "account", "create", "--name", "crash", "--entitled", "--metered=false")
	key, _ := wshub(t, 0, "admin", "key", "create", "--account", acct["accountId"].(string), "--name", "k")
	wshub(t, 0, "admin", "project", "add", "--account", acct["accountId"].(string), "--repository", hubtest.GitRepo(t))
	k := key["key"].(string)

	p := startHub(t, bin, env)
	ws := call(t, "POST", p.base+"/v1/api/workspaces", k, map[string]any{"agent": "agent_1", "model": "m", "prompt": "spawn a writer"})["workspace"].(map[string]any)
	id := ws["workspaceId"].(string)
	heartbeat := filepath.Join(dataDir, "workspaces", id, "checkout", "heartbeat")
	size := func() int64 {
		fi, err := os.Stat(heartbeat)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	deadline := time.Now().Add(30 * time.Second)
	for size() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's writer never started: %s", p.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	time.Sleep(500 * time.Millisecond) // the kernel ends the sandbox; let it settle
	before := size()
	time.Sleep(1500 * time.Millisecond)
	if after := size(); after != before {
		t.Fatalf("the agent's detached writer outlived the killed hub: heartbeat grew from %d to %d bytes", before, after)
	}

	// The restarted hub recovers the turn and runs the next one in the same checkout.
	p = startHub(t, bin, env)
	call(t, "POST", p.base+"/v1/api/workspaces/"+id+"/messages", k, map[string]any{"text": "after the crash"})
	waitMessages(t, p.base, k, id, "both turns answered", func(msgs []any) bool { return len(msgs) == 4 })
}
