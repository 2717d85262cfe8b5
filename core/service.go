// Package core holds wshub's domain: types, state rules, error codes and use cases, and
// the interfaces (ports) it needs from the outside. It imports the standard library only.
package core

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
)

// Deps are the adapters a Service runs on.
type Deps struct {
	Store     Store
	Sealer    Sealer // nil: no content key configured
	Blobs     BlobStore
	Providers Providers
	Agents    AgentCatalog
	Mirror    RepoMirror
	// EnvironmentFiles read projects' environment files at workspaces' bases (nil: no
	// environment is applied).
	EnvironmentFiles EnvironmentFiles
	Clock            Clock
	Random           Random
	Webhooks         WebhookURLPolicy
	// Sender makes webhook delivery attempts (nil: the hub does not deliver).
	Sender WebhookSender
	// Machines and Runner drive workspaces (the runtime); Runtime tunes them.
	Machines Machines
	Runner   AgentRunner
	Runtime  RuntimeConfig
	// Turns is told of every recorded turn (nil: no one).
	Turns TurnObserver
	// Sealed lists and replaces sealed values for Reseal (nil: Reseal refuses).
	Sealed SealedStore
	// Remote are the providers whose machines run `wshub runtime`, by provider id;
	// Branches keeps their workspaces' branches. Wakeups ends their long polls and
	// wakes the event streams' readers (nil: they poll).
	Remote   map[string]RemoteMachines
	Branches Branches
	Wakeups  Wakeups
	// Diffs reads workspaces' branches against their bases for the app (nil: the
	// app's diff page fails); DiffLimits bound that work.
	Diffs      BranchDiffs
	DiffLimits DiffLimits
	// Quotas are the hub's default limits per account.
	Quotas Quotas
	// Host is the host this hub is on: which local workspaces it steps and records.
	Host HostConfig
	// AppLimits are the app's session lifetimes.
	AppLimits AppLimits
	// Forges open pull requests on the projects' forges, by kind (nil: none).
	Forges Forges
	// PublicURL is where people reach the hub, for links to the app in what the hub
	// writes elsewhere (pull requests); "" leaves them out.
	PublicURL string

	// Cron parses schedules' cron expressions (nil: schedules are refused).
	Cron CronParser

	// Caches pack and unpack environments' cached paths on Machines (nil: no caches).
	Caches CacheFiles
}

// Service is every use case of the hub, grouped by who calls them. A front-end holds
// only its group: the groups the API and the bots hold take the caller's scope (an
// account, a chat place or session, a runtime's credentials) in every method, and the
// unscoped work (the operator's, the background jobs') sits in groups only the hub's
// wiring and the CLI hold. internal/layers checks both. Each group holds just the
// adapters its use cases run on.
type Service struct {
	Workspaces *Workspaces // the REST API: workspaces, messages, attachments, approvals, events
	Webhooks   *Webhooks   // the REST API's webhook endpoints
	Chat       *Chat       // the chat bots: commands, starts and sends from a thread
	RuntimeAPI *RuntimeAPI // the runtime API: what `wshub runtime` calls

	Worker     *Worker     // the workspace worker: claims, lifecycle steps, turns
	Sweeps     *Sweeps     // the cron sweeps
	Deliveries *Deliveries // the webhook delivery worker
	ChatQueues *ChatQueues // the chat inbox and outboxes' workers
	Admin      *Admin      // the operator's commands
	Caches     *Caches     // the operator's commands on projects' saved caches
	App        *App        // the app: sign-in, and each page's actions on the session's account
	// AppWorkspaces are the app's workspace pages, on the session's account.
	AppWorkspaces *AppWorkspaces
	// ProjectSecrets are the operator's commands on projects' secrets.
	ProjectSecrets *ProjectSecrets
	// AppProjects are the app's project pages (projects added, fixed, removed; their
	// secrets), on the session's account.
	AppProjects *AppProjects
	// Forge is the forge front-end's: deliveries in, issues' sessions, the hub's comments.
	Forge *ForgeEvents
	// ForgeAdmin is the operator's commands on projects' forge events.
	ForgeAdmin *ForgeAdmin
	// Schedules are the REST API's schedules, on the caller's account.
	Schedules *Schedules
	// ScheduleRuns are the schedule runner's: every account's due ticks.
	ScheduleRuns *ScheduleRuns
	// AppSchedules are the app's schedules page, on the session's account.
	AppSchedules *AppSchedules
}

// kernel is what every group shares: time, randomness and content sealing.
type kernel struct {
	sealer Sealer
	clock  Clock
	rand   Random
	// apps reads the accounts' GitHub Apps whose keys projects borrow (nil: none).
	apps accountApps
}

// logger is a group's log: the hub's, or slog's default when none was given.
type logger struct{ l *slog.Logger }

func (l logger) log() *slog.Logger {
	if l.l != nil {
		return l.l
	}
	return slog.Default()
}

// NewService builds a Service; a nil Clock or Random falls back to the real ones.
func NewService(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = SystemClock{}
	}
	if d.Random == nil {
		d.Random = rand.Reader
	}
	k := kernel{sealer: d.Sealer, clock: d.Clock, rand: d.Random, apps: d.Store}
	o := outbox{kernel: k, statusEvery: d.Runtime.ChatStatusEvery}
	lg := logger{d.Runtime.Log}
	pulls := pullRequests{kernel: k, logger: lg, store: d.Store, forges: d.Forges, appURL: d.PublicURL,
		checks: make(chan struct{}, maxPullChecks)}
	caches := &envCaches{kernel: k, logger: lg, store: d.Store, blobs: d.Blobs, files: d.Caches, maxBytes: d.Runtime.CacheMaxBytes}
	rt := &Worker{outbox: o, logger: lg, store: d.Store, blobs: d.Blobs, mirror: d.Mirror, envFiles: d.EnvironmentFiles, machines: d.Machines, runner: d.Runner,
		config: d.Runtime, turns: d.Turns, remote: d.Remote, branches: d.Branches, wake: d.Wakeups, quotas: d.Quotas,
		providers: d.Providers, host: d.Host, pulls: pulls, caches: caches}
	ws := &Workspaces{outbox: o, logger: lg, store: d.Store, blobs: d.Blobs, providers: d.Providers, agents: d.Agents, mirror: d.Mirror,
		quotas: d.Quotas, host: d.Host, pulls: pulls}
	ws.feeds = newEventFeeds(ws.readNewEvents, d.Wakeups, lg.log().Warn)
	hooks := &Webhooks{kernel: k, store: d.Store, policy: d.Webhooks}
	app := &App{kernel: k, store: d.Store, limits: d.AppLimits, quotas: d.Quotas, webhooks: hooks}
	secrets := &ProjectSecrets{kernel: k, store: d.Store}
	forgeAdmin := &ForgeAdmin{kernel: k, store: d.Store}
	schedules := &Schedules{kernel: k, logger: lg, store: d.Store, workspaces: ws, cron: d.Cron, quotas: d.Quotas}
	admin := &Admin{kernel: k, logger: lg, store: d.Store, blobs: d.Blobs, mirror: d.Mirror, sealed: d.Sealed, workspaces: ws, caches: caches}
	return &Service{
		Workspaces: ws,
		Webhooks:   hooks,
		Chat:       &Chat{outbox: o, store: d.Store, workspaces: ws, schedules: schedules},
		RuntimeAPI: newRuntimeAPI(rt),
		Worker:     rt,
		Sweeps:     &Sweeps{w: rt},
		Deliveries: &Deliveries{kernel: k, logger: lg, store: d.Store, sender: d.Sender},
		ChatQueues: &ChatQueues{outbox: o, logger: lg, store: d.Store, workspaces: ws},
		App:        app,
		AppWorkspaces: &AppWorkspaces{kernel: k, logger: lg, store: d.Store, blobs: d.Blobs, app: app, workspaces: ws, diffs: d.Diffs,
			diffLimits: d.DiffLimits, diffCache: newDiffCache(d.Blobs, d.Sealer, d.DiffLimits.cacheBytes(), lg.log().Warn),
			diffRuns: newAccountRuns(d.DiffLimits.perAccount()), branches: d.Branches, mirror: d.Mirror},
		Caches: &Caches{c: caches},
		Admin:  admin,

		ProjectSecrets: secrets,
		AppProjects: &AppProjects{store: d.Store, secrets: secrets, admin: admin, forge: forgeAdmin, policy: d.Webhooks,
			mirrors: make(chan struct{}, maxMirrors)},
		Forge:      &ForgeEvents{kernel: k, logger: lg, store: d.Store, forges: d.Forges, access: &forgeAccessCache{}},
		ForgeAdmin: forgeAdmin,

		Schedules:    schedules,
		ScheduleRuns: &ScheduleRuns{s: schedules},
		AppSchedules: &AppSchedules{app: app, schedules: schedules},
	}
}

// inTx runs fn in a transaction and retries it when it lost a unique race (ErrConflict),
// so that the retry re-reads the winner and answers as if it had come second.
func inTx(ctx context.Context, store TxStore, fn func(q Queries) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = store.InTx(ctx, fn)
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("transaction kept conflicting: %w", err)
}

// notFound turns a store miss into the wire code; other errors pass through.
func notFound(err error, code, detail string) error {
	if errors.Is(err, ErrNoRows) {
		return &Error{Code: code, Detail: detail}
	}
	return err
}

// contended maps a row lock not taken in time to the documented 503.
func contended(err error) error {
	if errors.Is(err, ErrContended) {
		return Errorf(CodeWorkspaceStateContended, "the workspace is busy with another change; retry")
	}
	return err
}

func (s kernel) requireSealer() error {
	if s.sealer == nil {
		return Errorf(CodeEncryptionNotConfigured, "content encryption is not configured on this hub")
	}
	return nil
}

func (s kernel) seal(plaintext []byte, binding string) ([]byte, error) {
	if err := s.requireSealer(); err != nil {
		return nil, err
	}
	out, err := s.sealer.Seal(plaintext, binding)
	if err != nil {
		return nil, Errorf(CodeSealFailed, "content could not be sealed")
	}
	return out, nil
}

func (s kernel) open(sealed []byte, binding string) (string, error) {
	return s.openAs(sealed, binding, false)
}

// openOnce is open for a sealed value read once and then dropped (a row of a page):
// opened over its own bytes, so the text is the one allocation.
func (s kernel) openOnce(sealed []byte, binding string) (string, error) {
	return s.openAs(sealed, binding, true)
}

func (s kernel) openAs(sealed []byte, binding string, inPlace bool) (string, error) {
	if err := s.requireSealer(); err != nil {
		return "", err
	}
	open := s.sealer.Open
	if inPlace {
		open = s.sealer.OpenInPlace
	}
	out, err := open(sealed, binding)
	if err != nil {
		return "", fmt.Errorf("open sealed %s: %w", binding, err)
	}
	return string(out), nil
}
