// Package hubtest runs a real hub for tests: its own PostgreSQL database, a real HTTP
// listener on loopback, real adapters, and an account with a key and a ready project
// made from a real git repository.
package hubtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// Hub is a running test hub.
type Hub struct {
	*hub.Hub
	t   testing.TB
	URL string // base URL, e.g. http://127.0.0.1:41234
	// MetricsURL is the base URL of the metrics listener (/metrics), apart from URL.
	MetricsURL string
	DBURL      string
	// Account, Key and Project are a ready-to-use tenant.
	Account *core.Account
	Key     string
	Project *core.Project
	// accounts counts the accounts NewAccount made, to name each apart.
	accounts int
}

// Option changes the configuration (or the injected clock) before the hub is built.
type Option func(*hub.Config, *hub.Options)

func configOption(f func(*hub.Config)) Option { return func(c *hub.Config, _ *hub.Options) { f(c) } }

// WithJobs runs all the hub's background work (every role: workspace worker,
// deliveries, chat, sweeps). Without it, or WithRoles, the hub runs none: workspaces
// stay as the API leaves them (queued), which API tests rely on.
func WithJobs() Option { return WithRoles(hub.AllRoles...) }

// WithRoles runs these parts of the hub's background work only.
func WithRoles(roles ...hub.Role) Option {
	return configOption(func(c *hub.Config) { c.Roles = slices.Clone(roles) })
}

// WithoutListen runs the hub as when LISTEN fails: no NOTIFY reaches its workers.
func WithoutListen() Option { return func(_ *hub.Config, o *hub.Options) { o.NoListen = true } }

// WithClock injects the hub's clock (core's notion of now: timestamps, backoff, leases).
func WithClock(clock core.Clock) Option {
	return func(_ *hub.Config, o *hub.Options) { o.Clock = clock }
}

// WithAgentCommand binds an agent id to a command (command-agent protocol).
func WithAgentCommand(agent, command string) Option {
	return configOption(func(c *hub.Config) { c.AgentCommands[agent] = command })
}

// WithConfig edits the configuration directly.
func WithConfig(f func(*hub.Config)) Option { return configOption(f) }

// WithoutContentKey starts the hub with no content key (sealing endpoints answer 503).
func WithoutContentKey() Option { return configOption(func(c *hub.Config) { c.ContentKey = "" }) }

// Start runs a hub for t and stops it when t ends.
func Start(t testing.TB, opts ...Option) *Hub {
	t.Helper()
	store, dbURL := pgtest.NewStore(t)
	cfg := hub.Config{
		DatabaseURL: dbURL, DataDir: t.TempDir(), ContentKey: NewContentKey(t),
		IdleTimeout: 10 * time.Minute, TurnTimeout: time.Minute, AgentCommands: map[string]string{},
		Roles: nil, MaxActiveWorkspaces: 4, WorkerPoll: 200 * time.Millisecond, SweepEvery: time.Hour,
		WebhookConcurrency: 16, WebhookPoll: 100 * time.Millisecond,
		ArchiveAfter: 7 * 24 * time.Hour, DeleteAfter: 30 * 24 * time.Hour,
		// Tests queue hundreds of messages with no worker to answer them; the quota tests
		// set an account's own quotas, which come first.
		MaxWorkspaces: 100_000, MaxOpenMessages: 100_000, MaxRunningTurns: 100_000,
		WebhookResolver: offline,
	}
	var hopt hub.Options
	for _, o := range opts {
		o(&cfg, &hopt)
	}
	if cfg.DatabaseURL != dbURL { // WithStoreProxy: the hub reaches its database through a proxy
		store = storeVia(t, cfg.DatabaseURL)
	}
	h, err := hub.New(cfg, store, nil, hopt)
	if err != nil {
		t.Fatalf("build hub: %v", err)
	}
	url := serveAPI(t, h)
	h.SetOwnURL(url)
	if h.Process != nil {
		t.Cleanup(h.Process.Close)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	if len(cfg.Roles) > 0 { // with none, Run would only LISTEN, which no test without jobs needs
		go func() { defer close(ran); _ = h.Run(runCtx) }()
	} else {
		close(ran)
	}
	t.Cleanup(func() {
		stopRun()
		<-ran
		// What the runner keeps and prepares for workspaces' next turns (processes and
		// cgroups) ends with the test, as with a hub that stops.
		_ = h.Close()
	})
	th := &Hub{Hub: h, t: t, URL: url, MetricsURL: serveMetrics(t, h), DBURL: dbURL}
	th.Account, th.Key = th.NewAccount(true)
	th.Project = th.NewProject(th.Account.ID, GitRepo(t))
	return th
}

// offline is the test hubs' resolver: a name /etc/hosts does not hold is not found, so
// no test asks a DNS server off the machine (a test that needs names gives its own).
var offline = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("a test hub looks up no names")
}}

// NewContentKey returns a random base64 AES-256 key.
func NewContentKey(t testing.TB) string {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}

// NewAccount creates an account (entitled or not) and a key for it.
func (h *Hub) NewAccount(entitled bool) (*core.Account, string) {
	h.t.Helper()
	ctx := context.Background()
	// Not metered, so it needs no billing period; billing tests make it metered.
	// Named apart, as people tell accounts apart: "test", "test 2", ...
	h.accounts++
	name := "test"
	if h.accounts > 1 {
		name = fmt.Sprintf("test %d", h.accounts)
	}
	a := &core.Account{Name: name, Entitled: entitled, Metered: false}
	if err := h.Service.Admin.CreateAccount(ctx, a); err != nil {
		h.t.Fatalf("create account: %v", err)
	}
	_, key, err := h.Service.Admin.CreateAPIKey(ctx, a.ID, "test")
	if err != nil {
		h.t.Fatalf("create key: %v", err)
	}
	return a, key
}

// SetProjectNetwork sets the test project's network (core.NetworkFull, None, Host).
// Tests that are about something else than the network use none: a full turn starts
// its own network stack, which costs time a timing-sensitive test cannot spare on a
// loaded machine.
func (h *Hub) SetProjectNetwork(network string) {
	h.t.Helper()
	p, err := h.Service.Admin.UpdateProject(context.Background(), core.UpdateProjectInput{ProjectID: h.Project.ID, Network: &network})
	if err != nil {
		h.t.Fatalf("set project network: %v", err)
	}
	h.Project = p
}

// NewProject connects repo to the account and prepares it (mirror clone).
func (h *Hub) NewProject(accountID, repo string) *core.Project {
	h.t.Helper()
	ctx := context.Background()
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: accountID, Repository: repo})
	if err != nil {
		h.t.Fatalf("add project: %v", err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil {
		h.t.Fatalf("prepare project: %v", err)
	}
	return p
}

// PG returns the hub's store (tests read raw rows through it).
func (h *Hub) PG() *postgres.Store { return h.Hub.Store }

// FakeAgent is the path of the fake command agent (hub/testdata/agent.sh): the
// prompt's first word picks its behaviour (write, sleep, hold, fail, big, attachments, env).
func FakeAgent(t testing.TB) string {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("hubtest: cannot locate its own source")
	}
	return filepath.Join(filepath.Dir(here), "..", "testdata", "agent.sh")
}

// GitRepo creates a git repository with one commit on branch main and returns its path.
func GitRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q", "-b", "main")
	Git(t, dir, "add", ".")
	Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
	return dir
}

// Git runs git in dir and returns its trimmed output.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// Code returns the error code of an error body.
func (r *Response) Code() string {
	s, _ := r.Body["error"].(string)
	return s
}

// Call sends a request with key (empty: no Authorization header). body may be nil,
// []byte (sent raw) or any value (sent as JSON). headers are name, value pairs. It fails
// the hub's test on a transport error; use Try from other goroutines and subtests.
func (h *Hub) Call(method, path, key string, body any, headers ...string) *Response {
	h.t.Helper()
	r, err := h.Try(method, path, key, body, headers...)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// Try is Call reporting failures as an error, safe on any goroutine.
func (h *Hub) Try(method, path, key string, body any, headers ...string) (*Response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if err := CheckResponse(method, h.URL+path, resp.StatusCode, resp.Header, raw); err != nil {
		return nil, err
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			return nil, fmt.Errorf("%s %s: answer is not a JSON object: %v: %.200s", method, path, err, raw)
		}
	}
	return r, nil
}

// TryAll sends the same request n times at once (one goroutine each, released together)
// and returns the answers in order; a transport error fails t after all have returned.
func (h *Hub) TryAll(t testing.TB, n int, method, path, key string, body any, headers ...string) []*Response {
	t.Helper()
	results, errs := make([]*Response, n), make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = h.Try(method, path, key, body, headers...)
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d of %d: %v", i+1, n, err)
		}
	}
	return results
}

// Expect fails the test unless r has the status (and, for errors, the code).
func (r *Response) Expect(t testing.TB, status int, code string) *Response {
	t.Helper()
	if r.Status != status || (code != "" && r.Code() != code) {
		t.Fatalf("expected %d %s, got %d %s", status, code, r.Status, r.Raw)
	}
	return r
}

// WithPublicURL sets the hub's public address (webhooks may not point at its host).
func WithPublicURL(u string) Option { return configOption(func(c *hub.Config) { c.PublicURL = u }) }

// WithAgentCommands binds several agent ids to commands, as WSHUB_AGENT_<N>_COMMAND
// would (added to any bound before).
func WithAgentCommands(cmds map[string]string) Option {
	return configOption(func(c *hub.Config) {
		if c.AgentCommands == nil {
			c.AgentCommands = map[string]string{}
		}
		for id, cmd := range cmds {
			c.AgentCommands[id] = cmd
		}
	})
}

// NewForgeProject adds a project on repo, a repository of a forge of kind, that pushes,
// reached with its own token, whose pull requests are mode, and mirrors it.
func (h *Hub) NewForgeProject(repo, kind, mode, token string) *core.Project {
	h.t.Helper()
	ctx := context.Background()
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Push: true,
		Forge: core.ProjectForgeInput{Forge: &kind, PullRequests: &mode,
			Credential: &core.ProjectCredential{Kind: core.CredentialToken, Token: token}}})
	if err != nil {
		h.t.Fatalf("add project: %v", err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		h.t.Fatalf("prepare project: %s %v %s", p.State, err, p.FailureReason)
	}
	return p
}
