package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// hubProcess is a real `wshub serve` process.
type hubProcess struct {
	cmd    *exec.Cmd
	base   string
	logs   *syncBuffer   // written by the process's copier while the test reads it
	exited chan struct{} // closed once the process has exited and been waited for
}

// kill ends the hub with SIGKILL, as a crash does, and waits for it to be gone.
func (p *hubProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// buildBinary is the wshub binary, built once per test binary: the tests that run it
// share it, each with a data directory and database of its own.
func buildBinary(t *testing.T) string {
	t.Helper()
	return hubtest.WshubBinary(t)
}

// freePort is a loopback address on a port nothing listens on, below the range the
// kernel gives ports from to listeners on :0 (ip_local_port_range). Its user listens
// on it later (a hub, once open), and meanwhile a test running beside this one that
// listens on :0 cannot be given it: one was, when freePort's port came from there.
// Within this test binary each port is handed out once.
func freePort(t *testing.T) string {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			low, _ = strconv.Atoi(f[0])
		}
	}
	for range 100 {
		port := 10000 + rand.IntN(max(low-10000, 1))
		if ports.given[port] {
			continue
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		ports.given[port] = true
		return addr
	}
	t.Fatalf("no free loopback port below %d", low)
	return ""
}

// ports are those freePort has handed out.
var ports = struct {
	sync.Mutex
	given map[int]bool
}{given: map[int]bool{}}

// startHub starts `wshub serve` on a free loopback port and waits until it is ready.
func startHub(t *testing.T, bin string, env []string) *hubProcess {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	addr := freePort(t)
	cmd.Env = append(append(os.Environ(), env...), "WSHUB_ADDR="+addr)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hub: %v", err)
	}
	p := &hubProcess{cmd: cmd, base: "http://" + addr, logs: logs, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-p.exited })
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
	t.Parallel()
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
	p.kill(t)

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
	env                        []string // the hub processes' settings
	admin                      environ  // in-process `wshub admin` on the same database
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
	f.admin = testEnviron(f.env...)
	acct, _ := wshub(t, f.admin, 0, "admin", "account", "create", "--name", "crash", "--entitled", "--metered=false")
	key, _ := wshub(t, f.admin, 0, "admin", "key", "create", "--account", acct["accountId"].(string), "--name", "k")
	wshub(t, f.admin, 0, "admin", "project", "add", "--account", acct["accountId"].(string), "--repository", hubtest.GitRepo(t))
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
