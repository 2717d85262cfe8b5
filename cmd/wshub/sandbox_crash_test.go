package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// TestAgentProcessesDieWithAKilledHub kills `wshub serve` with SIGKILL while its agent
// runs a detached writer (setsid, out of the turn's process group) that appends to a
// file in the checkout. Before the sandbox, such processes were re-parented to init and
// kept writing into the checkout while the next turn ran; in the sandbox they die with
// the hub (bubblewrap's --die-with-parent and the turn's PID namespace).
func TestAgentProcessesDieWithAKilledHub(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	const writer = "while :; do date +%s%N >> heartbeat; sleep 0.05; done"
	f := newCrashFixture(t, "#!/bin/sh\nprompt=$(cat)\ncase \"$prompt\" in\n"+
		"spawn*) setsid sh -c '"+writer+"' </dev/null >/dev/null 2>&1 &\n sleep 60 ;;\n"+
		"esac\necho \"echo: $prompt\"\n")
	bin, env, k, dataDir := f.bin, f.env, f.key, f.dataDir

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
	if !eventually.Within(30*time.Second, func() bool { return size() > 0 && hubtest.Running("sh", "-c", writer) }) {
		t.Fatalf("the agent's writer never started: %s", p.logs.String())
	}
	p.kill(t)
	// The kernel ends the sandbox's processes as it ends the hub: the writer is gone,
	// and the heartbeat stops with it.
	if !eventually.Within(10*time.Second, func() bool { return !hubtest.Running("sh", "-c", writer) }) {
		t.Fatalf("the agent's detached writer outlived the killed hub: heartbeat at %d bytes and growing", size())
	}

	// The restarted hub recovers the turn and runs the next one in the same checkout.
	p = startHub(t, bin, env)
	call(t, "POST", p.base+"/v1/api/workspaces/"+id+"/messages", k, map[string]any{"text": "after the crash"})
	waitMessages(t, p.base, k, id, "both turns answered", func(msgs []any) bool { return len(msgs) == 4 })
}
