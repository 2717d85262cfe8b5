package turns_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/agentcli"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/modelapi"
)

// BenchmarkRealClaudeTurn is the turn users feel: the real Claude Code CLI answering a
// trivial prompt on the local stand-in for the model API, run by hand (the command
// line the hub gives it, in a checkout, resuming its session as the hub's later turns
// do) and through the hub (send accepted → reply recorded, from the messages' own
// stamps; local provider, in the sandbox), one of each per op, so both see the same
// machine. The stand-in is on the host's loopback, so the project's network is host:
// the namespaces of a full network are B5's figure. Reported: each one's p50, and the
// hub's p50 as a percentage of the hand's (the target: at most 110).
func BenchmarkRealClaudeTurn(b *testing.B) {
	cli := agentcli.Claude(b)
	b.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	handAPI, hubAPI := modelapi.New(b), modelapi.New(b)
	dir, home := b.TempDir(), b.TempDir()
	if out, err := exec.Command("git", "init", "--quiet", dir).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	env := append(os.Environ(), "HOME="+home, "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL="+handAPI.URL,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"IS_SANDBOX=1") // as root (CI), the only way it takes --dangerously-skip-permissions
	h := hubtest.Start(b, hubtest.WithJobs(), hubtest.WithConfig(func(c *hub.Config) {
		c.ClaudePath, c.ClaudeBaseURL = cli.Path, hubAPI.URL
		c.SandboxReadOnly = []string{cli.Dir}
		c.AgentEnv = []string{"ANTHROPIC_API_KEY"}
	}))
	h.SetProjectNetwork(core.NetworkHost) // the stand-in listens on the host's loopback
	id := hubtest.CreateOn(b, h, "local", "", "runtimeMode", "full-access")
	hubtest.WaitFor(b, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })

	session := ""
	var hand []float64
	for i := 0; b.Loop(); i++ {
		handAPI.Script(modelapi.Reply{Text: fmt.Sprintf("done %d", i)})
		args := []string{"-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"}
		if session != "" {
			args = append(args, "--resume", session)
		}
		cmd := exec.Command(cli.Path, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(fmt.Sprintf("turn %d", i))
		start := time.Now()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		hand = append(hand, float64(time.Since(start))/float64(time.Millisecond))
		if err != nil || !bytes.Contains(out, []byte(fmt.Sprintf("done %d", i))) {
			b.Fatalf("turn %d by hand: %v\n%s\n%s", i, err, out, stderr.Bytes())
		}
		session = sessionOf(out)

		hubAPI.Script(modelapi.Reply{Text: fmt.Sprintf("done %d", i)})
		h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": fmt.Sprintf("turn %d", i)}).Expect(b, 200, "")
		eventually.Eventually(b, 2*time.Minute, fmt.Sprintf("turn %d recorded", i), func() bool {
			var seq int64
			if err := h.PG().DB().Get(&seq, `SELECT latest_seq FROM workspaces WHERE id = $1`, id); err != nil {
				b.Fatal(err)
			}
			return seq == int64(2*(i+1))
		})
	}
	var failed int
	if err := h.PG().DB().Get(&failed, `SELECT count(*) FROM messages WHERE workspace_id = $1 AND role = 'assistant' AND outcome <> 'completed'`, id); err != nil || failed > 0 {
		b.Fatalf("expected every turn completed: %d not, %v", failed, err)
	}
	var hubMS []float64
	if err := h.PG().DB().Select(&hubMS, `SELECT extract(epoch FROM a.created_at - u.created_at) * 1000
		FROM messages u JOIN messages a ON a.workspace_id = u.workspace_id AND a.turn_id = u.turn_id AND a.role = 'assistant'
		WHERE u.workspace_id = $1 AND u.role = 'user'`, id); err != nil {
		b.Fatal(err)
	}
	handP50, hubP50 := percentile(hand, 0.50), percentile(hubMS, 0.50)
	b.ReportMetric(handP50, "hand-ms-p50")
	b.ReportMetric(hubP50, "hub-ms-p50")
	b.ReportMetric(100*hubP50/handP50, "hub-%-of-hand")
}

// sessionOf is the session id a stream-json run reports, to resume it.
func sessionOf(out []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type      string `json:"type"`
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}

// percentile is the p-th percentile of ms (sorted in place).
func percentile(ms []float64, p float64) float64 {
	slices.Sort(ms)
	return ms[max(0, int(math.Ceil(p*float64(len(ms))))-1)]
}
