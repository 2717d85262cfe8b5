package hub_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// Hub.Run owns what it starts: the jobs' loops, the LISTEN connection, the kubernetes
// informer, Slack's Socket Mode and Discord's gateway. When Run returns, they have
// returned, and no goroutine started while it ran is left.

// unreachable answers every request with an error: a chat platform that is down.
type unreachable struct{}

func (unreachable) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("unreachable")
}

// goroutine is one goroutine of a dump: its id and its stack, without the line that
// names its creator (which outlives the creator's return).
type goroutine struct{ id, stack string }

var goroutineHeader = regexp.MustCompile(`^goroutine (\d+) `)

func goroutines() []goroutine {
	buf := make([]byte, 8<<20)
	var out []goroutine
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		m := goroutineHeader.FindStringSubmatch(g)
		if m == nil {
			continue
		}
		stack, _, _ := strings.Cut(g, "\ncreated by ")
		out = append(out, goroutine{id: m[1], stack: stack})
	}
	return out
}

// started are the goroutines of now that were not among before.
func started(before, now []goroutine) []goroutine {
	was := map[string]bool{}
	for _, g := range before {
		was[g.id] = true
	}
	var out []goroutine
	for _, g := range now {
		// The store's pool starts its cleaner when connections come back: the store's,
		// not Run's, and it outlives Run by design (it stops when the store closes).
		if !was[g.id] && !strings.Contains(g.stack, "database/sql.") {
			out = append(out, g)
		}
	}
	return out
}

func running(gs []goroutine, fn string) bool {
	for _, g := range gs {
		if strings.Contains(g.stack, fn) {
			return true
		}
	}
	return false
}

func stacksOf(gs []goroutine) string {
	var b strings.Builder
	for _, g := range gs {
		b.WriteString(g.stack + "\n\n")
	}
	return b.String()
}

// Run's own functions and the long-lived ones it calls: none may still be running once
// Run has returned. (The goroutines inside the libraries they call stop a moment
// after them: those are waited for below, with the rest.)
var ownedByRun = []string{
	"github.com/wshub/wshub/hub.(*Hub).Run",
	"github.com/wshub/wshub/jobs.",
	"github.com/wshub/wshub/adapters/postgres.(*Listener).Run",
	"github.com/wshub/wshub/adapters/kube.(*Machines).Watch",
	"github.com/wshub/wshub/bots/discord.(*Bot).Run",
	"github.com/wshub/wshub/bots/slack.(*Bot).RunSocketMode(",
}

// unreachableParts is a hub configuration with every role and every part Run may
// start, on a cluster and chat platforms that cannot be reached: the informer and the
// bots keep trying, as they would in production, until Run stops them.
func unreachableParts(t *testing.T, dbURL string) hub.Config {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: none, user: {}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`), 0o600); err != nil {
		t.Fatal(err)
	}
	return hub.Config{
		DatabaseURL: dbURL, DataDir: t.TempDir(), AgentCommands: map[string]string{}, Roles: hub.AllRoles,
		MaxActiveWorkspaces: 4, WorkerPoll: 200 * time.Millisecond, WebhookConcurrency: 4, WebhookPoll: 100 * time.Millisecond,
		SweepEvery: time.Second, LeaseFor: 30 * time.Second,
		Providers: []string{"local", "kubernetes"}, Kubeconfig: kubeconfig, KubeNamespace: "wshub",
		KubeImage: "registry.example/wshub:test", RuntimeHubURL: "http://127.0.0.1:1",
		SlackBotToken: "xoxb-test", SlackAppToken: "xapp-test", SlackAPIURL: "http://127.0.0.1:1/api/",
		DiscordBotToken: "test", DiscordHTTPClient: &http.Client{Transport: unreachable{}},
	}
}

// runUntil runs h.Run until the functions fns all run in goroutines started since
// before, and returns those goroutines and a function that stops Run and waits for it.
func runUntil(t *testing.T, h *hub.Hub, before []goroutine, fns ...string) (now []goroutine, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.Run(ctx) }()
	stop = func() {
		t.Helper()
		cancel()
		if err := <-ran; err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	all := eventually.Within(30*time.Second, func() bool {
		now = started(before, goroutines())
		for _, fn := range fns {
			if !running(now, fn) {
				return false
			}
		}
		return true
	})
	if !all {
		stop()
		t.Fatalf("expected %q running; started:\n%s", fns, stacksOf(now))
	}
	return now, stop
}

func TestRunReturnsOnlyOnceEverythingItStartedHasStopped(t *testing.T) {
	store, dbURL := pgtest.NewStore(t)
	h, err := hub.New(unreachableParts(t, dbURL), store, nil, hub.Options{})
	if err != nil {
		t.Fatalf("build hub: %v", err)
	}
	before := goroutines()
	now, stop := runUntil(t, h, before, ownedByRun...)
	t.Logf("goroutines before Run: %d; while it runs: %d more", len(before), len(now))
	stop()
	left := started(before, goroutines())
	for _, fn := range ownedByRun {
		if running(left, fn) {
			t.Errorf("%s still runs after Run returned", fn)
		}
	}
	if t.Failed() {
		t.Fatalf("goroutines started while Run ran and left after it returned: %d\n%s", len(left), stacksOf(left))
	}
	t.Logf("goroutines started while Run ran, left as it returned: %d", len(left))
	if !eventually.Within(10*time.Second, func() bool { left = started(before, goroutines()); return len(left) == 0 }) {
		t.Fatalf("goroutines started while Run ran still run %s after it returned: %d\n%s", 10*time.Second, len(left), stacksOf(left))
	}
}
