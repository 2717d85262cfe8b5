package turns_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// probeAgent is a command agent standing in for a malicious one. "plant X" writes X
// into its checkout; "probe <path>..." reports, per line, whether it could read each
// path, then what else it could reach.
const probeAgent = `#!/bin/bash
read -r verb rest
case "$verb" in
plant) echo "$rest" > planted.txt; echo planted ;;
probe)
	for p in $rest; do
		if cat "$p" >/dev/null 2>&1 || ls "$p" >/dev/null 2>&1; then echo "read $p"; else echo "denied $p"; fi
	done
	if env | grep -q postgres://; then echo "env has the database URL"; fi
	if [ -n "$WSHUB_CONTENT_KEY" ]; then echo "env has the content key"; fi
	if exec 3<>/dev/tcp/127.0.0.1/$LOOPBACK_PORT; then echo "connected"; else echo "no network"; fi 2>/dev/null
	echo kept > "$HOME/kept"; echo done ;;
esac`

// TestTurnsAreSandboxed runs the real hub (worker, local provider, runner in the
// bubblewrap sandbox) and has one workspace's agent go after another's checkout, the
// data directory, the hub's own process and secrets, and the network.
func TestTurnsAreSandboxed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			c.Close()
		}
	}()
	// The agent learns the port from its own environment: the operator names it in
	// WSHUB_AGENT_ENV, the one way a hub variable reaches agents.
	t.Setenv("LOOPBACK_PORT", fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	agent := filepath.Join(t.TempDir(), "probe.sh")
	if err := os.WriteFile(agent, []byte(probeAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	var dataDir string
	h := hubtest.Start(t, hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", agent), hubtest.WithConfig(func(c *hub.Config) {
		c.AgentEnv, dataDir = []string{"LOOPBACK_PORT"}, c.DataDir
	}))
	theirs := hubtest.CreateWorkspace(t, h, "plant another-teams-code")
	hubtest.WaitFor(t, h, theirs, "the planting turn done", hubtest.IdleAfterTurns(1))
	secret := filepath.Join(dataDir, "workspaces", theirs, "checkout", "planted.txt")
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("expected the first workspace's file on the host: %v", err)
	}
	targets := []string{secret, dataDir, filepath.Join(dataDir, "mirrors"), filepath.Join(dataDir, "assets"),
		fmt.Sprintf("/proc/%d/environ", os.Getpid()), fmt.Sprintf("/proc/%d", os.Getpid())}

	for _, network := range []string{core.NetworkFull, core.NetworkNone, core.NetworkHost} {
		t.Run(network, func(t *testing.T) {
			if _, err := h.Service.Admin.UpdateProject(context.Background(), core.UpdateProjectInput{ProjectID: h.Project.ID, Network: &network}); err != nil {
				t.Fatal(err)
			}
			mine := hubtest.CreateWorkspace(t, h, "probe "+strings.Join(targets, " "))
			hubtest.WaitFor(t, h, mine, "the probing turn done", hubtest.IdleAfterTurns(1))
			msgs, _ := hubtest.Messages(t, h, mine)
			reply := msgs[1].Text
			for _, p := range targets {
				if !strings.Contains(reply, "denied "+p) {
					t.Errorf("expected the agent denied %s, its report was:\n%s", p, reply)
				}
			}
			for _, leak := range []string{"database URL", "content key"} {
				if strings.Contains(reply, leak) {
					t.Errorf("the agent's environment leaked the hub's %s:\n%s", leak, reply)
				}
			}
			wantNet := map[string]string{core.NetworkFull: "no network", core.NetworkNone: "no network", core.NetworkHost: "connected"}[network]
			if !strings.Contains(reply, wantNet) || !strings.HasSuffix(reply, "done") {
				t.Errorf("network %s: expected %q and a finished probe, got:\n%s", network, wantNet, reply)
			}
			if b, err := os.ReadFile(filepath.Join(dataDir, "workspaces", mine, "home", "kept")); err != nil || string(b) != "kept\n" {
				t.Errorf("expected the agent's home file in the workspace's home on the host, got %q, %v", b, err)
			}
		})
	}
}
