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
// do) and through the hub (send accepted → reply recorded, local provider, in the
// sandbox). The stand-in is on the host's loopback, so the project's network is host:
// the namespaces of a full network are B5's figure. ms-p50 of each; the hub's share
// is the difference.
func BenchmarkRealClaudeTurn(b *testing.B) {
	cli := agentcli.Claude(b)
	b.Run("by-hand", func(b *testing.B) {
		api := modelapi.New(b)
		dir, home := b.TempDir(), b.TempDir()
		if out, err := exec.Command("git", "init", "--quiet", dir).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v: %s", err, out)
		}
		env := append(os.Environ(), "HOME="+home, "ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL="+api.URL,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
			"IS_SANDBOX=1") // as root (CI), the only way it takes --dangerously-skip-permissions
		session := ""
		var ms []float64
		for i := 0; b.Loop(); i++ {
			api.Script(modelapi.Reply{Text: fmt.Sprintf("done %d", i)})
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
			ms = append(ms, float64(time.Since(start))/float64(time.Millisecond))
			if err != nil || !bytes.Contains(out, []byte(fmt.Sprintf("done %d", i))) {
				b.Fatalf("turn %d by hand: %v\n%s\n%s", i, err, out, stderr.Bytes())
			}
			session = sessionOf(out)
		}
		reportPercentiles(b, ms)
	})
	b.Run("through-the-hub", func(b *testing.B) {
		b.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
		api := modelapi.New(b)
		h := hubtest.Start(b, hubtest.WithJobs(), hubtest.WithConfig(func(c *hub.Config) {
			c.ClaudePath, c.ClaudeBaseURL = cli.Path, api.URL
			c.SandboxReadOnly = []string{cli.Dir}
			c.AgentEnv = []string{"ANTHROPIC_API_KEY"}
		}))
		h.SetProjectNetwork(core.NetworkHost) // the stand-in listens on the host's loopback
		id := hubtest.CreateOn(b, h, "local", "", "runtimeMode", "full-access")
		hubtest.WaitFor(b, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
		var ms []float64
		for i := 0; b.Loop(); i++ {
			api.Script(modelapi.Reply{Text: fmt.Sprintf("done %d", i)})
			h.Call("POST", "/v1/api/workspaces/"+id+"/messages", h.Key, map[string]any{"text": fmt.Sprintf("turn %d", i)}).Expect(b, 200, "")
			start := time.Now()
			eventually.Eventually(b, 2*time.Minute, fmt.Sprintf("turn %d recorded", i), func() bool {
				var seq int64
				if err := h.PG().DB().Get(&seq, `SELECT latest_seq FROM workspaces WHERE id = $1`, id); err != nil {
					b.Fatal(err)
				}
				return seq == int64(2*(i+1))
			})
			ms = append(ms, float64(time.Since(start))/float64(time.Millisecond))
		}
		var failed int
		if err := h.PG().DB().Get(&failed, `SELECT count(*) FROM messages WHERE workspace_id = $1 AND role = 'assistant' AND outcome <> 'completed'`, id); err != nil || failed > 0 {
			b.Fatalf("expected every turn completed: %d not, %v", failed, err)
		}
		reportPercentiles(b, ms)
	})
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

// reportPercentiles reports the p50 and p99 of ms, milliseconds per turn.
func reportPercentiles(b *testing.B, ms []float64) {
	slices.Sort(ms)
	pct := func(p float64) float64 { return ms[max(0, int(math.Ceil(p*float64(len(ms))))-1)] }
	b.ReportMetric(pct(0.50), "ms-p50")
	b.ReportMetric(pct(0.99), "ms-p99")
}
