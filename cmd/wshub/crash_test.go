package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// hubProcess is a real `wshub serve` process.
type hubProcess struct {
	cmd  *exec.Cmd
	base string
	logs *bytes.Buffer
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "wshub")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	return bin
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startHub(t *testing.T, bin string, env []string) *hubProcess {
	t.Helper()
	addr := freePort(t)
	cmd := exec.Command(bin, "serve")
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(append(os.Environ(), env...), "WSHUB_ADDR="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	p := &hubProcess{cmd: cmd, base: "http://" + addr, logs: logs}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if !eventually.Within(20*time.Second, func() bool { return ready(p.base) }) {
		t.Fatalf("hub did not become ready: %s", logs.String())
	}
	return p
}

// ready reports whether the hub at base answers /readyz with 200.
func ready(base string) bool {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == 200
}

func call(t *testing.T, method, url, key string, body any) map[string]any {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %v", method, url, resp.StatusCode, out)
	}
	return out
}

// TestHubKilledDuringATurnRecovers kills `wshub serve` with SIGKILL while an agent
// runs, restarts it, and expects the documented recovery: once the dead worker's
// lease runs out, the turn is ended interrupted, and the queue goes on.
func TestHubKilledDuringATurnRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// The agent sleeps a length no other test's does, to find its process.
	f := newCrashFixture(t, "#!/bin/sh\nprompt=$(cat)\ncase \"$prompt\" in sleep*) sleep 64;; esac\necho \"echo: $prompt\"\n")
	bin, env, k := f.bin, f.env, f.key

	p := startHub(t, bin, env)
	ws := call(t, "POST", p.base+"/v1/api/workspaces", k, map[string]any{"agent": "agent_1", "model": "m", "prompt": "sleep please"})["workspace"].(map[string]any)
	id := ws["workspaceId"].(string)
	waitMessages(t, p.base, k, id, "the first message delivered", func(msgs []any) bool {
		return len(msgs) == 1 && msgs[0].(map[string]any)["status"] == "delivered"
	})
	eventually.Eventually(t, time.Minute, "the agent running", func() bool { return hubtest.AgentSleeping("64") })
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	p = startHub(t, bin, env)
	call(t, "POST", p.base+"/v1/api/workspaces/"+id+"/messages", k, map[string]any{"text": "after the crash"})
	msgs := waitMessages(t, p.base, k, id, "both turns answered", func(msgs []any) bool { return len(msgs) == 4 })
	// Replies by turn: the interrupted turn is answered first, then the queued message.
	replies := map[string]string{}
	var order []string
	for _, raw := range msgs {
		m := raw.(map[string]any)
		if m["status"] != "settled" {
			t.Fatalf("expected every message settled, got %v", m)
		}
		if m["role"] == "assistant" {
			replies[m["turnId"].(string)] = fmt.Sprintf("%s %s", m["outcome"], m["text"])
			order = append(order, m["turnId"].(string))
		}
	}
	first, second := msgs[0].(map[string]any)["turnId"].(string), ""
	for _, raw := range msgs {
		if m := raw.(map[string]any); m["role"] == "user" && m["text"] == "after the crash" {
			second = m["turnId"].(string)
		}
	}
	if !strings.HasPrefix(replies[first], "interrupted ") || replies[second] != "completed echo: after the crash" ||
		len(order) != 2 || order[0] != first {
		t.Fatalf("expected the killed turn interrupted and then the next answered, got %v in order %v", replies, order)
	}
}

// crashFixture is a built binary, its environment (1 s leases) with agent_1 bound to an
// agent script, and an account with a key and a ready project made through `wshub admin`.
type crashFixture struct {
	bin, dataDir, key, account string
	env                        []string
}

func newCrashFixture(t *testing.T, script string) crashFixture {
	t.Helper()
	f := crashFixture{bin: buildBinary(t), dataDir: t.TempDir()}
	// Outside the data directory, as an operator installs an agent.
	agent := filepath.Join(t.TempDir(), "agent.sh")
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	db, contentKey := pgtest.NewDatabase(t), hubtest.NewContentKey(t)
	f.env = []string{
		"DATABASE_URL=" + db, "WSHUB_DATA_DIR=" + f.dataDir, "WSHUB_CONTENT_KEY=" + contentKey,
		"WSHUB_AGENT_1_COMMAND=" + agent, "WSHUB_LEASE_FOR=1s", "WSHUB_WORKER_POLL=200ms",
	}
	t.Setenv("DATABASE_URL", db)
	t.Setenv("WSHUB_DATA_DIR", f.dataDir)
	t.Setenv("WSHUB_CONTENT_KEY", contentKey)
	acct, _ := wshub(t, 0, "admin", "account", "create", "--name", "crash", "--entitled", "--metered=false")
	key, _ := wshub(t, 0, "admin", "key", "create", "--account", acct["accountId"].(string), "--name", "k")
	wshub(t, 0, "admin", "project", "add", "--account", acct["accountId"].(string), "--repository", hubtest.GitRepo(t))
	f.key, f.account = key["key"].(string), acct["accountId"].(string)
	return f
}

func waitMessages(t *testing.T, base, key, id, what string, cond func([]any) bool) []any {
	t.Helper()
	// Generous: a loaded machine (the whole suite, a soak) is slow to start runtimes.
	return eventually.Value(t, 2*time.Minute, what, func() ([]any, error) {
		msgs := call(t, "GET", base+"/v1/api/workspaces/"+id+"/messages", key, nil)["messages"].([]any)
		if !cond(msgs) {
			return nil, fmt.Errorf("got %v", msgs)
		}
		return msgs, nil
	})
}
