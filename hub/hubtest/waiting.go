package hubtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// WaitingAgent is a command agent whose turn, when the prompt starts with "wait",
// marks .started in the checkout and waits until the test creates .go there. Every
// turn writes its prompt to prompt.txt (a change to commit) and answers "reply: <prompt>".
const WaitingAgent = `prompt=$(cat)
case "$prompt" in wait*)
	touch .started
	while [ ! -e .go ]; do sleep 0.05; done
	rm -f .go .started ;;
esac
echo "$prompt" > prompt.txt
echo "reply: $prompt"`

// StartBehindProxy runs a hub with its worker, whose database is reached through a
// proxy the test cuts, and agent_1 bound to WaitingAgent.
func StartBehindProxy(t *testing.T, leaseFor time.Duration, opts ...Option) (*Hub, *Proxy) {
	t.Helper()
	px := NewProxy(t)
	h := Start(t, append([]Option{WithJobs(), WithStoreProxy(px),
		WithAgentCommand("agent_1", WaitingAgent),
		WithConfig(func(c *hub.Config) { c.LeaseFor = leaseFor })}, opts...)...)
	return h, px
}

// WaitForFile waits for path to exist (a minute at most).
func WaitForFile(t *testing.T, path string) {
	t.Helper()
	eventually.Eventually(t, time.Minute, path, func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// Touch creates the empty file path (the waiting agent's signal to go on).
func Touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// AgentSleeping reports whether a fake agent's `sleep secs` (or `hold`) runs on this
// host: a test that gives its agent a length no other test uses knows from it that the
// agent has started.
func AgentSleeping(secs string) bool { return Running("sleep", secs) }

// Running reports whether a process with exactly these arguments runs on this host,
// seen from outside any sandbox's PID namespace.
func Running(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		if b, err := os.ReadFile(c); err == nil && string(b) == want {
			return true
		}
	}
	return false
}
