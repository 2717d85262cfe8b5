// Package limits_test runs a real hub against what a tenant may not do: turns past
// their workspace's memory, slow or oversized requests, encoded bodies, rate limits,
// quotas, fair claims across accounts, and event streams that share their reads.
package limits_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3"

	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// hogAgent holds 256 MB in its shell when asked to "eat", and answers anything else.
const hogAgent = `#!/bin/sh
read -r verb
case "$verb" in
eat) x=$(head -c 268435456 /dev/zero | tr '\0' a); echo "held ${#x} bytes" ;;
*) echo "fine" ;;
esac`

// A workspace of 128 MiB (WSHUB_LOCAL_MEMORY_MIB) whose agent allocates past it: the
// kernel kills it, the turn ends error saying it ran out of memory, and the workspace
// goes on taking turns. On the local provider, inside the hub, and on the process
// provider, inside `wshub runtime`, which is told the size by the hub.
func TestTurnPastTheWorkspaceMemoryEndsErrorSayingSo(t *testing.T) {
	if cgroups.Mode() == cgroups.Unavailable {
		t.Skip("this machine has no cgroup file system mounted at /sys/fs/cgroup")
	}
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "hog.sh")
	if err := os.WriteFile(agent, []byte(hogAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	h := hubtest.StartProcessHub(t, hubtest.WithAgentCommand("agent_1", agent), hubtest.WithConfig(func(c *hub.Config) {
		c.LocalCPU, c.LocalMemoryMiB = 1, 128
	}))
	// No pasta in the turn's group: the limit is the agent's, with room for the sandbox
	// on a busy machine.
	h.SetProjectNetwork(core.NetworkNone)
	ready := h.Call("GET", "/readyz", "", nil).Expect(t, 200, "")
	if got, _ := ready.Body["agentLimits"].(string); !strings.HasPrefix(got, "cgroup v") {
		t.Errorf("expected /readyz to say turns run in cgroups, got %v", ready.Body)
	}
	sizes := h.Call("GET", "/v1/api/providers", h.Key, nil).Expect(t, 200, "").Body["providers"].([]any)
	for _, p := range sizes {
		size := p.(map[string]any)["sizes"].([]any)[0].(map[string]any)
		if size["memoryMib"] != float64(128) || size["vcpuCount"] != float64(1) {
			t.Errorf("expected every provider on this host to offer 1 vCPU and 128 MiB, got %v", p)
		}
	}
	for _, provider := range []string{core.LocalProviderID, machines.ProcessProviderID} {
		t.Run(provider, func(t *testing.T) {
			id := hubtest.CreateOn(t, h, provider, "eat")
			hubtest.WaitFor(t, h, id, "idle after the turn", hubtest.IdleAfterTurns(1))
			msgs, tf := hubtest.Messages(t, h, id)
			if msgs[1].Outcome != "error" || tf == nil || tf["code"] != "agent_error" {
				t.Fatalf("expected the turn to end error with agent_error, got %+v, %v", msgs[1], tf)
			}
			if m, _ := tf["message"].(string); !strings.Contains(m, "ran out of memory") || !strings.Contains(m, "128 MiB") {
				t.Errorf("expected the failure to name the memory limit of 128 MiB, got %q", m)
			}
			hubtest.Send(t, h, id, "hello")
			hubtest.WaitFor(t, h, id, "idle after a second turn", hubtest.IdleAfterTurns(2))
			if got := hubtest.Replies(t, h, id); len(got) != 2 || got[1] != "completed: fine" {
				_, tf := hubtest.Messages(t, h, id)
				t.Errorf("expected the next turn to complete, got %q (turnFailure %v)", got, tf)
			}
		})
	}
}

// WSHUB_AGENT_LIMITS=off: the hub starts without making cgroups, and /readyz says so.
func TestReadyzSaysWhenLimitsAreOff(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, hubtest.WithConfig(func(c *hub.Config) { c.AgentLimits = "off" }))
	ready := h.Call("GET", "/readyz", "", nil).Expect(t, 200, "")
	if ready.Body["agentLimits"] != "off" || ready.Body["ok"] != true {
		t.Errorf("expected /readyz ok with agentLimits off, got %v", ready.Body)
	}
}
