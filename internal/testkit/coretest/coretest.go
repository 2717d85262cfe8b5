// Package coretest builds core's use cases for tests without a hub: a core.Service on
// a real PostgreSQL store (a database of its own per test, cloned from the migrated
// template), with fakes of core's other ports that a test drives by hand:
//
//   - Clock: a clock that moves only when the test advances it;
//   - Machines: workspaces' checkouts as temporary directories, commits and pushes
//     as the test sets them;
//   - Runner: an agent that plays, turn by turn, the script the test gave for its
//     prompt (events, approval asks, a reply, a failure, a turn held open);
//   - Forge: pull requests kept in memory;
//   - Receiver: webhook attempts kept in memory, every one acknowledged.
//
// No HTTP server and no background loop run: the test calls the use cases
// (Service.Workspaces, Sweeps, ...) and steps the worker itself (Claim, Step, Settle),
// so what happens, happens in the test's own goroutine and order. Notifications are
// real: a LISTEN connection on the test's database wakes core's waits (an approval's
// decision, a stop, an event stream), and a test waits for a turn's events on core's
// own stream (Events). Cloning the database costs more than all a test's cases: cases
// that can share one run as subtests of one Core (Cases).
package coretest

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/jobs"
)

// HostID is the host the harness's worker serves: its local workspaces are claimed
// by it.
const HostID = "coretest"

// Core is core's use cases on a test's own database, with the fakes that drive them.
type Core struct {
	*core.Service
	// Store is the test's database (tests may read rows through Store.DB()).
	Store    *postgres.Store
	Clock    *Clock
	Machines *Machines
	Runner   *Runner
	Forge    *Forge
	Receiver *Receiver
	// Account is an entitled account with one ready Project.
	Account *core.Account
	Project *core.Project

	t     testing.TB
	store *store
	deps  core.Deps
}

// New builds core for t. edit, when given, changes the Deps before the Service is
// built (quotas, the runtime's settings); the fakes are in them already.
func New(t testing.TB, edit ...func(*core.Deps)) *Core {
	t.Helper()
	pg, url := pgtest.NewStore(t)
	st := newStore(pg)
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	wake := listen(t, url)
	c := &Core{Store: pg, store: st, Clock: newClock(wake), Machines: newMachines(t), Runner: &Runner{}, Forge: &Forge{}, Receiver: &Receiver{}, t: t}
	deps := core.Deps{
		Store: st, Sealer: sealer, Blobs: postgres.NewBlobs(pg), Providers: providers{}, Agents: agents{},
		Mirror: &mirror{dir: t.TempDir()}, Clock: c.Clock, Random: rand.Reader,
		Machines: c.Machines, Runner: c.Runner, Wakeups: wake, Sealed: pg, Sender: c.Receiver,
		// Warnings only, on stderr (shown when a test fails): core's goroutines may
		// log after the test has ended, when t.Log would panic.
		Runtime: core.RuntimeConfig{TurnTimeout: time.Minute, Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))},
		Forges:  core.Forges{core.ForgeGitHub: c.Forge, core.ForgeGitLab: c.Forge, core.ForgeGitea: c.Forge},
		// Tests queue messages with no turn to take them; a quota test sets its
		// account's own, which come first.
		Quotas: core.Quotas{Workspaces: 1000, OpenMessages: 1000, RunningTurns: 1000},
		Host:   core.HostConfig{ID: HostID, Local: true, Pin: true},
		Cron:   jobs.CronParser{},
	}
	for _, e := range edit {
		e(&deps)
	}
	c.Service, c.deps = core.NewService(deps), deps
	c.Account = c.NewAccount()
	c.Project = c.NewProject(c.Account.ID, core.AddProjectInput{})
	return c
}

// Replica is another hub's use cases on the same database and fakes: what a second
// replica would run.
func (c *Core) Replica() *core.Service { return core.NewService(c.deps) }

// With is c for a subtest: the same core and database, failing t. Subtests that
// share a Core run one after another (not in parallel): Settle and the sweeps take
// whatever work the database holds.
func (c *Core) With(t testing.TB) *Core {
	cp := *c
	cp.t = t
	return &cp
}

// Case is one case of a test whose cases share a Core (a database costs about half a
// second to clone; a case, milliseconds).
type Case struct {
	Name string
	Test func(t *testing.T, c *Core)
}

// Cases runs each case as a subtest of t on c, one after another.
func (c *Core) Cases(t *testing.T, cases ...Case) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) { tc.Test(t, c.With(t)) })
	}
}

// NewAccount creates an entitled account, not metered (no billing period needed).
func (c *Core) NewAccount() *core.Account {
	c.t.Helper()
	a := &core.Account{Name: "test", Entitled: true}
	if err := c.Admin.CreateAccount(context.Background(), a); err != nil {
		c.t.Fatalf("create account: %v", err)
	}
	return a
}

// NewProject adds a project to the account and prepares it (ready, on branch main).
// in's AccountID and Repository are filled in; the rest is the test's.
func (c *Core) NewProject(accountID string, in core.AddProjectInput) *core.Project {
	c.t.Helper()
	ctx := context.Background()
	in.AccountID = accountID
	if in.Repository == "" {
		in.Repository = "https://github.com/example/repo.git"
	}
	p, err := c.Admin.AddProject(ctx, in)
	if err != nil {
		c.t.Fatalf("add project: %v", err)
	}
	if err := c.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		c.t.Fatalf("prepare project: expected it ready, got %s %q (%v)", p.State, p.FailureReason, err)
	}
	return p
}

// SetQuotas sets an account's own quotas (nil: left as they are).
func (c *Core) SetQuotas(accountID string, u core.AccountUpdate) *core.Account {
	c.t.Helper()
	a, err := c.Admin.UpdateAccount(context.Background(), accountID, u)
	if err != nil {
		c.t.Fatalf("set quotas: %v", err)
	}
	return a
}

// Create creates a workspace of acct on its only project with agent_1, with prompt as
// its first message ("": none). It fails the test on an error.
func (c *Core) Create(acct *core.Account, prompt string) *core.Workspace {
	c.t.Helper()
	ws, err := c.TryCreate(acct, prompt)
	if err != nil {
		c.t.Fatalf("create workspace: %v", err)
	}
	return ws
}

// TryCreate is Create that returns the use case's error.
func (c *Core) TryCreate(acct *core.Account, prompt string, mode ...string) (*core.Workspace, error) {
	agent, model := "agent_1", "test-model"
	in := core.CreateWorkspaceInput{Agent: &agent, Model: &model}
	if prompt != "" {
		in.Prompt = &prompt
	}
	if len(mode) > 0 {
		in.RuntimeMode = &mode[0]
	}
	ws, _, err := c.Workspaces.CreateWorkspace(context.Background(), acct, in)
	return ws, err
}

// Send sends text to the workspace as acct; it fails the test on an error.
func (c *Core) Send(acct *core.Account, workspaceID, text string) *core.SendReceipt {
	c.t.Helper()
	r, err := c.TrySend(acct, workspaceID, text, "")
	if err != nil {
		c.t.Fatalf("send %q: %v", text, err)
	}
	return r
}

// TrySend sends text with an idempotency key ("": none) and returns the use case's
// error.
func (c *Core) TrySend(acct *core.Account, workspaceID, text, key string) (*core.SendReceipt, error) {
	in := core.SendMessageInput{Text: &text}
	if key != "" {
		in.HeaderKey = &key
	}
	return c.Workspaces.SendMessage(context.Background(), acct, workspaceID, in)
}

// Messages lists the workspace's messages, oldest first.
func (c *Core) Messages(acct *core.Account, workspaceID string) []*core.Message {
	c.t.Helper()
	page, err := c.Workspaces.ListMessages(context.Background(), acct, workspaceID, 0, 100)
	if err != nil {
		c.t.Fatalf("list messages: %v", err)
	}
	return page.Messages
}

// Workspace reads a workspace of acct.
func (c *Core) Workspace(acct *core.Account, id string) *core.Workspace {
	c.t.Helper()
	ws, err := c.Workspaces.GetWorkspace(context.Background(), acct, id)
	if err != nil {
		c.t.Fatalf("get workspace %s: %v", id, err)
	}
	return ws
}
