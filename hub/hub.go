package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/adapters/assets"
	"github.com/wshub/wshub/adapters/forge/gitea"
	"github.com/wshub/wshub/adapters/forge/github"
	"github.com/wshub/wshub/adapters/forge/gitlab"
	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/adapters/kube"
	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/adapters/metrics"
	"github.com/wshub/wshub/adapters/netguard"
	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/sandbox"
	"github.com/wshub/wshub/adapters/seal"
	"github.com/wshub/wshub/adapters/webhooks"
	discordbot "github.com/wshub/wshub/bots/discord"
	slackbot "github.com/wshub/wshub/bots/slack"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/jobs"
	"github.com/wshub/wshub/web"
)

// Hub is an assembled hub: its store, use cases and HTTP app.
type Hub struct {
	Config  Config
	Store   *postgres.Store
	Service *core.Service
	App     *fiber.App
	// Web is the app at /app/.
	Web     *web.App
	Log     *slog.Logger
	Metrics *metrics.Metrics
	// Slack is the Slack bot, nil when WSHUB_SLACK_BOT_TOKEN is unset.
	Slack *slackbot.Bot
	// Discord is the Discord bot, nil when WSHUB_DISCORD_BOT_TOKEN is unset.
	Discord *discordbot.Bot
	// ContentKeyID names the key that seals ("" without one); logs and reseal show it.
	ContentKeyID string
	// Process is the process provider, nil unless WSHUB_PROVIDERS lists it.
	Process *machines.Process
	// Kube is the kubernetes provider, nil unless WSHUB_PROVIDERS lists it.
	Kube *kube.Machines
	// AgentLimits says how local turns are held to their workspace's size (the cgroup
	// hierarchy, or "off ..."), for the start-up log.
	AgentLimits string
	// AgentLimitsMissing says why turns run without the limits asked for (the
	// development hub, where no cgroup could be had): "" otherwise.
	AgentLimitsMissing string
	// fanout is the one broadcaster of NOTIFY, fed by the LISTEN connection of Run: it
	// wakes the jobs' loops, remote runtimes' long polls, event feeds, stops and approvals.
	fanout *postgres.Fanout
	// noListen: Run does not LISTEN (Options.NoListen).
	noListen bool
	// endStreams ends every open event stream and live page (EndStreams).
	endStreams context.CancelFunc
	// closeRunner ends what the local agent runner keeps between turns (workspaces'
	// network namespaces); nil without one.
	closeRunner func()
}

// EndStreams ends every open event stream and live page at once: before the server's
// shutdown, which waits for open responses, and a stream lasts minutes. Their clients
// resume with Last-Event-ID from another replica, or this one when it is back.
func (h *Hub) EndStreams() { h.endStreams() }

// SetOwnURL tells the parts that need the hub's address where it serves, unless the
// configuration named one (serve learns the port only once it listens): the process
// provider's runtimes (WSHUB_RUNTIME_HUB_URL) and the app's sign-in (WSHUB_PUBLIC_URL).
func (h *Hub) SetOwnURL(url string) {
	if h.Process != nil && h.Process.HubURL == "" {
		h.Process.HubURL = url
	}
	h.Web.SetPublicURL(url)
}

// Options let tests replace the clock and randomness.
type Options struct {
	Clock  core.Clock
	Random core.Random
	// Admin opens the hub for an operator command: no agent turn runs in it, so there is
	// no agent runner and the sandbox is not checked.
	Admin bool
	// NoListen runs the workers as when LISTEN fails: no NOTIFY reaches them, and they
	// poll (tests of that fallback).
	NoListen bool
}

// Open connects to the database and builds every part. The caller closes it.
func Open(ctx context.Context, cfg Config, log *slog.Logger, opt Options) (*Hub, error) {
	store, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.Options{})
	if err != nil {
		return nil, err
	}
	h, err := New(cfg, store, log, opt)
	if err != nil {
		store.Close()
		return nil, err
	}
	return h, nil
}

// New builds a hub on an open store (Open's second half; tests use a store per test).
func New(cfg Config, store *postgres.Store, log *slog.Logger, opt Options) (*Hub, error) {
	if log == nil {
		log = slog.Default()
	}
	timeout := cmp.Or(cfg.WebhookTimeout, webhooks.DefaultTimeout)
	if cfg.WebhookLeaseFor != 0 && cfg.WebhookLeaseFor <= timeout {
		return nil, fmt.Errorf("WSHUB_WEBHOOK_LEASE_FOR (%s) must exceed the %s attempt limit", cfg.WebhookLeaseFor, timeout)
	}
	cfg.Retention = cmp.Or(cfg.Retention, core.MinRetention) // zero: a Config built in code left it unset
	if err := checkRetention(cfg.Retention); err != nil {
		return nil, err
	}
	if err := cfg.Roles.check(); err != nil {
		return nil, err
	}
	if cfg.CacheMaxBytes < 0 {
		return nil, fmt.Errorf("WSHUB_CACHE_MAX_BYTES (%d) must be 0 (no caches) or more", cfg.CacheMaxBytes)
	}
	if cfg.RuntimeHubLostAfter < 0 {
		return nil, fmt.Errorf("WSHUB_RUNTIME_HUB_LOST_AFTER (%s) must be more than 0", cfg.RuntimeHubLostAfter)
	}
	cfg.HostHeartbeat = cmp.Or(cfg.HostHeartbeat, DefaultHostHeartbeat)
	cfg.HostLostAfter = cmp.Or(cfg.HostLostAfter, DefaultHostLostAfter)
	if err := cfg.hostSettings(); err != nil {
		return nil, err
	}
	var sealer core.Sealer
	keys, err := contentKeys(cfg)
	if err != nil {
		return nil, err
	}
	if keys != nil {
		sealer = keys
	}
	blobs, err := blobStore(cfg, store)
	if err != nil {
		return nil, err
	}
	publicHost := ""
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("WSHUB_PUBLIC_URL: %w", err)
		}
		publicHost = u.Hostname()
	}
	// An alias of the hub's public host is refused by address, at registration and at
	// every delivery's dial.
	webhookPolicy := core.WebhookURLPolicy{PublicHost: publicHost, AllowInsecure: cfg.WebhookAllowInsecure,
		Resolver: cmp.Or(cfg.WebhookResolver, net.DefaultResolver)}
	webhookSender := webhooks.New(webhooks.Options{Timeout: cfg.WebhookTimeout, AllowInsecure: cfg.WebhookAllowInsecure,
		Resolver: cfg.WebhookResolver, HubHost: publicHost})
	author, err := gitrepo.ParseAuthor(cfg.CommitAuthor)
	if err != nil {
		return nil, fmt.Errorf("WSHUB_COMMIT_AUTHOR: %w", err)
	}
	// Each project's git uses its own credential; the hub-wide one is the fallback.
	creds := &gitrepo.ProjectCredentials{KeyDir: filepath.Join(cfg.DataDir, "keys"), Apps: &github.Apps{},
		Guard: &gitrepo.RemoteGuard{Resolver: cfg.WebhookResolver, AllowLoopback: cfg.WebhookAllowInsecure}}
	if token := cmp.Or(cfg.GitHTTPSToken, strings.TrimSpace(cfg.GitHTTPSTokenFile)); token != "" || cfg.GitSSHKeyFile != "" {
		creds.Fallback = &gitrepo.Credentials{HTTPSUser: cfg.GitHTTPSUser, HTTPSToken: token, SSHKeyFile: cfg.GitSSHKeyFile}
	}
	guardedForge := netguard.Client(30*time.Second, cfg.WebhookAllowInsecure)
	// A cache of each project's repository on this hub's disk: one that lacks it clones
	// it when it first needs it (Refresh).
	mirror := &gitrepo.Mirror{Dir: filepath.Join(cfg.DataDir, "mirrors"), Auth: creds, Git: cfg.Git}
	providers := machines.NewLocalSized(cfg.LocalCPU, cfg.LocalMemoryMiB)
	local := len(cfg.Providers) == 0 || slices.ContainsFunc(cfg.Providers, func(p string) bool { return strings.TrimSpace(p) == core.LocalProviderID })
	var runner core.AgentRunner
	var closeRunner func()
	limits, limitsMissing := "none (an operator command runs no turn)", ""
	if !local {
		providers.DisableLocal()
		limits = "none (local is not among WSHUB_PROVIDERS: this hub runs no agent itself)"
	}
	lookPath := agents.ProgramLookPath(cfg.ClaudePath, cfg.CodexPath, exec.LookPath)
	// The agents' cgroups bound the hub's own git on their work too (the app's diff).
	var confine gitrepo.Confiner
	if !opt.Admin && local {
		r, err := agents.New(context.Background(), agents.Options{
			Commands: cfg.AgentCommands, LookPath: lookPath, AgentEnv: cfg.AgentEnv, LookupEnv: cfg.LookupEnv, Self: cfg.Self,
			ClaudeBaseURL: cfg.ClaudeBaseURL, CodexBaseURL: cfg.CodexBaseURL,
			StateDir: filepath.Join(cfg.DataDir, "run"),
			Sandbox: sandbox.Config{Mode: cfg.Sandbox, ReadOnly: cfg.SandboxReadOnly, EgressAllow: cfg.AgentEgressAllow,
				TmpBytes: cfg.SandboxTmpBytes, ShmBytes: cfg.SandboxShmBytes,
				KeptNetworks: cfg.SandboxKeptNetworks, KeptNetworkBytes: cfg.SandboxKeptNetworkBytes,
				// Nothing of the data directory is visible to agents but their own
				// checkout and home, bound one by one.
				Hidden: []string{cfg.DataDir}},
			Limits: sandbox.LimitsConfig{Mode: cfg.AgentLimits, PidsMax: cfg.AgentPidsMax, Size: providers.HostSize(), Optional: cfg.AgentLimitsOptional},
			Log:    log,
		})
		if err != nil {
			return nil, err
		}
		runner, limits, limitsMissing, confine, closeRunner = r, r.Limits(), r.LimitsMissing(), r, r.Close
	}
	remote, process, kubeMachines, err := remoteProviders(cfg, providers, log)
	if err != nil {
		return nil, err
	}
	if cfg.DefaultProvider != "" {
		if err := providers.SetDefault(cfg.DefaultProvider); err != nil {
			return nil, fmt.Errorf("WSHUB_DEFAULT_PROVIDER: %w", err)
		}
	}
	if providers.Default() == "" {
		return nil, errors.New("WSHUB_PROVIDERS: no provider to run workspaces on (local, process, kubernetes)")
	}
	fanout := postgres.NewFanout()
	m := metrics.New()
	localMachines := &machines.LocalMachines{Dir: filepath.Join(cfg.DataDir, "workspaces"), Auth: creds, DiskBytes: cfg.WorkspaceDiskBytes, Author: author,
		Git: cfg.Git}
	svc := core.NewService(core.Deps{
		Store:     store,
		Sealer:    sealer,
		Blobs:     blobs,
		Providers: providers,
		Agents:    agents.NewCatalog(cfg.AgentCommands, lookPath),
		Mirror:    mirror,
		// The environment files are read from git's objects in the mirror.
		EnvironmentFiles: mirror,
		Clock:            opt.Clock,
		Random:           opt.Random,
		Webhooks:         webhookPolicy,
		Sender:           webhookSender,
		Machines:         localMachines,
		Runner:           runner,
		Runtime: core.RuntimeConfig{TurnTimeout: cfg.TurnTimeout, ApprovalTimeout: cfg.ApprovalTimeout,
			ChatStatusEvery: cfg.ChatStatusEvery, MirrorMaxAge: cfg.MirrorMaxAge, MaxConcurrentImports: cfg.MaxConcurrentImports,
			Poll: cfg.WorkerPoll, Log: log, CacheMaxBytes: cfg.CacheMaxBytes},
		Turns:  m,
		Sealed: store,
		Remote: remote,
		// The branches' shared copy is a row and a blob; this hub's disk holds a cache.
		Branches: &gitrepo.WorkspaceBranches{Dir: filepath.Join(cfg.DataDir, "branches"), Auth: creds,
			Copies: postgres.NewBranchCopies(store), Blobs: blobs, Mirror: mirror,
			MaxObjectBytes: cfg.BranchMaxObjectBytes, MaxBranchBytes: cfg.BranchMaxBytes},
		Wakeups: fanout,
		Diffs: &gitrepo.BranchDiffs{Checkouts: filepath.Join(cfg.DataDir, "workspaces"), Branches: filepath.Join(cfg.DataDir, "branches"),
			Git: cfg.DiffGit, LargeFile: cfg.DiffLargeFile, Confine: confine},
		DiffLimits: core.DiffLimits{PerAccount: cfg.MaxDiffsPerAccount, Timeout: cfg.DiffTimeout},
		AppLimits:  core.AppLimits{Idle: cfg.AppSessionIdle, Max: cfg.AppSessionMax},
		// Pull requests go through each forge's own client, with the project's token;
		// a repository an owner gave is called at public addresses only, as its git is.
		Forges: core.Forges{
			core.ForgeGitHub: &github.Forge{Token: creds.Token, GuardedHTTPClient: guardedForge},
			core.ForgeGitLab: &gitlab.Forge{Token: creds.Token, GuardedHTTPClient: guardedForge},
			core.ForgeGitea:  &gitea.Forge{Token: creds.Token, GuardedHTTPClient: guardedForge},
		},
		PublicURL: cfg.PublicURL,
		Cron:      jobs.CronParser{},
		// Caches are packed and unpacked in the local workspaces' directories.
		Caches: localMachines,
		Quotas: core.Quotas{Workspaces: cfg.MaxWorkspaces, OpenMessages: cfg.MaxOpenMessages,
			RunningTurns: cfg.MaxRunningTurns, Keys: cfg.MaxKeys, Schedules: cfg.MaxSchedules},
		// A hub whose worker does not run leaves the host of what it creates to the claim.
		Host: core.HostConfig{ID: cfg.HostID, Local: local, Pin: cfg.running().Has(RoleWorker)},
	})
	m.WatchWorkQueue(svc.Admin.CountWork)
	h := &Hub{Config: cfg, Store: store, Service: svc, Log: log, Metrics: m, Process: process, Kube: kubeMachines, fanout: fanout, noListen: opt.NoListen,
		AgentLimits: limits, AgentLimitsMissing: limitsMissing, closeRunner: closeRunner}
	if keys != nil {
		h.ContentKeyID = keys.CurrentKeyID()
	}
	if err := h.serve(opt.Clock); err != nil {
		return nil, err
	}
	return h, nil
}

// discordSignIn is the app's Discord sign-in: the application's id and OAuth2 secret,
// both needed (none: no Discord sign-in).
func discordSignIn(cfg Config) web.Discord {
	if cfg.DiscordAppID == "" || cfg.DiscordClientSecret == "" {
		return web.Discord{}
	}
	return web.Discord{ClientID: cfg.DiscordAppID, ClientSecret: cfg.DiscordClientSecret, HTTPClient: cfg.DiscordHTTPClient}
}

// Run runs the background work of the replica's roles (workspace worker, webhook
// deliveries, chat queues and bots, sweeps and the kubernetes informer) and the LISTEN
// connection every replica holds, until ctx ends. It owns all it starts: it returns
// once every part has returned, running turns interrupted and recorded.
func (h *Hub) Run(ctx context.Context) error {
	roles := h.Config.running()
	h.Log.Info("background work", "roles", roles)
	var g errgroup.Group
	// Each part stops when ctx ends; none stops the others by failing (the sweeps'
	// error, their only one, is returned once everything has stopped).
	part := func(run func()) { g.Go(func() error { run(); return nil }) }
	if h.noListen {
		h.Log.Warn("LISTEN off; the workers poll only")
	} else if l, err := postgres.Listen(h.Config.DatabaseURL, h.Log, h.fanout, core.WorkChannel, core.DeliveryChannel,
		core.ChatEventChannel, core.ChatReplyChannel, core.EventsChannel, core.StopChannel, core.ApprovalChannel, core.ChatStatusChannel,
		core.ScheduleChannel); err != nil {
		h.Log.Warn("LISTEN failed; the workers poll only", "err", err)
	} else {
		part(func() { l.Run(ctx) })
	}
	// Every replica records its host alive, whatever its roles: the host's local
	// workspaces are lost only once no hub of the host is left.
	beat := &jobs.HostBeat{Core: h.Service.Sweeps, Every: h.Config.HostHeartbeat, Log: h.Log}
	part(func() { beat.Run(ctx) })
	if roles.Has(RoleWorker) {
		worker := &jobs.Worker{Core: h.Service.Worker, Waker: h.fanout, Log: h.Log, Concurrency: h.Config.MaxActiveWorkspaces,
			Poll: h.Config.WorkerPoll, LeaseFor: h.Config.LeaseFor}
		part(func() { worker.Run(ctx) })
	}
	if roles.Has(RoleDeliveries) {
		sender := &jobs.Deliveries{Core: h.Service.Deliveries, Waker: h.fanout, Log: h.Log, Observer: h.Metrics,
			Concurrency: h.Config.WebhookConcurrency, Poll: h.Config.WebhookPoll, LeaseFor: h.Config.WebhookLeaseFor}
		part(func() { sender.Run(ctx) })
	}
	if roles.Has(RoleChat) {
		h.runChat(ctx, part)
	}
	if roles.Has(RoleSweeps) {
		sweeps := &jobs.Sweeps{Core: h.Service.Sweeps, Log: h.Log, Every: h.Config.SweepEvery, Retention: h.Config.Retention,
			HostLostAfter: h.Config.HostLostAfter,
			Runtimes:      core.RuntimeSweepConfig{OfflineAfter: h.Config.RuntimeOfflineAfter, StartTimeout: h.Config.RuntimeStartTimeout},
			Lifecycle: core.LifecycleConfig{
				IdleTimeout: h.Config.IdleTimeout, ArchiveAfter: h.Config.ArchiveAfter, DeleteAfter: h.Config.DeleteAfter,
			}}
		g.Go(func() error { return sweeps.Run(ctx) })
		// Schedules ride with the sweeps: each tick runs once across the replicas that run them.
		schedules := &jobs.Schedules{Core: h.Service.ScheduleRuns, Log: h.Log, Wake: h.fanout}
		part(func() { _ = schedules.Run(ctx) })
		if h.Kube != nil {
			part(func() { h.Kube.Watch(ctx, h.Config.KubeUnschedulableAfter, h.Service.Sweeps.MachineFailed) })
		}
	}
	<-ctx.Done() // whatever ran, or returned early, Run lasts until ctx ends
	return g.Wait()
}

// runChat starts, as parts of Run, the chat bots' connections and the queues they
// handle and post. Without a chat bot there is nothing to handle or post: no polling
// of the chat tables (it was a dozen statements a second on an idle hub).
func (h *Hub) runChat(ctx context.Context, part func(func())) {
	chat := &jobs.Chat{Core: h.Service.ChatQueues, Waker: h.fanout, Log: h.Log, Observer: h.Metrics,
		Handlers: map[string]core.ChatEventHandler{}, Posters: map[string]core.ChatPoster{}}
	if h.Slack != nil {
		chat.Handlers[core.PlatformSlack], chat.Posters[core.PlatformSlack] = h.Slack.HandleEvent, h.Slack
		if h.Config.SlackAppToken != "" {
			part(func() {
				if err := h.Slack.RunSocketMode(ctx); err != nil && ctx.Err() == nil {
					h.Log.Error("slack socket mode stopped", "err", err)
				}
			})
		}
	}
	if h.Discord != nil {
		chat.Handlers[core.PlatformDiscord], chat.Posters[core.PlatformDiscord] = h.Discord.HandleEvent, h.Discord
		part(func() {
			if err := h.Discord.Run(ctx); err != nil && ctx.Err() == nil {
				h.Log.Error("discord gateway stopped", "err", err)
			}
		})
	}
	h.addForges(chat)
	if len(chat.Handlers) > 0 {
		part(func() { chat.Run(ctx) })
	}
}

// Close releases the store, and what the agent runner keeps between turns.
func (h *Hub) Close() error {
	h.endStreams()
	if h.closeRunner != nil {
		h.closeRunner()
	}
	return h.Store.Close()
}

// contentKeys builds the sealer from WSHUB_CONTENT_KEY and WSHUB_CONTENT_KEYS (nil:
// neither is set). Errors never echo key material.
func contentKeys(cfg Config) (*seal.AESGCM, error) {
	var one, ring *seal.AESGCM
	var err error
	if strings.TrimSpace(cfg.ContentKey) != "" {
		if one, err = seal.FromBase64(cfg.ContentKey); err != nil {
			return nil, fmt.Errorf("WSHUB_CONTENT_KEY: %w", err)
		}
	}
	if strings.TrimSpace(cfg.ContentKeys) != "" {
		if ring, err = seal.FromKeyList(cfg.ContentKeys); err != nil {
			return nil, fmt.Errorf("WSHUB_CONTENT_KEYS: %w", err)
		}
	}
	switch {
	case ring == nil:
		return one, nil
	case one != nil && one.CurrentKeyID() != ring.CurrentKeyID():
		return nil, fmt.Errorf("WSHUB_CONTENT_KEY (key id %s) is not the first of WSHUB_CONTENT_KEYS (key id %s): set one of them", one.CurrentKeyID(), ring.CurrentKeyID())
	}
	return ring, nil
}

// remoteProviders builds the providers WSHUB_PROVIDERS lists besides local, adds them
// to the catalog, and returns them by id for the runtime.
func remoteProviders(cfg Config, catalog *machines.Local, log *slog.Logger) (map[string]core.RemoteMachines, *machines.Process, *kube.Machines, error) {
	remote := map[string]core.RemoteMachines{}
	var process *machines.Process
	var km *kube.Machines
	for _, id := range cfg.Providers {
		switch strings.TrimSpace(id) {
		case "", core.LocalProviderID:
		case machines.ProcessProviderID:
			if process != nil {
				continue
			}
			process = &machines.Process{Dir: filepath.Join(cfg.DataDir, "machines"), Program: cfg.RuntimeProgram,
				HubURL: cfg.RuntimeHubURL, Env: runtimeEnv(cfg), Log: log}
			remote[machines.ProcessProviderID] = process
			catalog.Add(process.Provider(catalog.HostSize()))
		case kube.ProviderID:
			if km != nil {
				continue
			}
			var err error
			if km, err = kubeProvider(cfg, log); err != nil {
				return nil, nil, nil, err
			}
			remote[kube.ProviderID] = km
			catalog.Add(km.Provider())
		default:
			return nil, nil, nil, fmt.Errorf("WSHUB_PROVIDERS: unknown provider %q (known: local, process, kubernetes)", id)
		}
	}
	return remote, process, km, nil
}

// kubeProvider builds the kubernetes provider from WSHUB_KUBE_* (docs/kubernetes.md).
func kubeProvider(cfg Config, log *slog.Logger) (*kube.Machines, error) {
	if cfg.RuntimeHubURL == "" || cfg.KubeImage == "" {
		return nil, fmt.Errorf("the kubernetes provider needs WSHUB_RUNTIME_HUB_URL (the hub as Pods reach it) and WSHUB_KUBE_IMAGE")
	}
	rc, err := kube.RESTConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubernetes provider: %w", err)
	}
	var env []corev1.EnvVar
	for _, kv := range runtimeSettings(cfg) {
		k, v, _ := strings.Cut(kv, "=")
		if k == "WSHUB_AGENT_LIMITS" {
			// The Pod's resources.limits are the workspace's size and bound the runtime
			// and its turns together; a runtime that is not root in its Pod cannot make
			// cgroups of its own anyway.
			v = "off"
		}
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	return kube.New(rc, kube.Config{
		Namespace: cfg.KubeNamespace, Image: cfg.KubeImage, ServiceAccount: cfg.KubeServiceAccount, HubURL: cfg.RuntimeHubURL,
		NodeSelector: cfg.KubeNodeSelector, StorageClass: cfg.KubeStorageClass, VolumeSize: cfg.KubeVolumeSize,
		Size: core.ProviderSize{ID: "standard", DisplayName: fmt.Sprintf("%d vCPU, %d MiB", cfg.KubeCPU, cfg.KubeMemoryMiB),
			VCPUCount: cfg.KubeCPU, MemoryMiB: cfg.KubeMemoryMiB},
		Env: env, AgentSecret: cfg.KubeAgentSecret, ImagePullPolicy: corev1.PullPolicy(cfg.KubeImagePullPolicy), Log: log,
		ImageAllow: cfg.KubeImageAllow,
	})
}

// runtimeEnv is what a process runtime gets of the hub's configuration: the runtime's
// and the agents' settings and the variables WSHUB_AGENT_ENV names for them. Never the
// database URL, the content keys or git credentials.
func runtimeEnv(cfg Config) []string {
	env := runtimeSettings(cfg)
	// The runtime's programs are found on the PATH the hub was given; the provider's
	// own PATH comes first, and exec keeps the last.
	for _, name := range append([]string{"PATH"}, cfg.AgentEnv...) {
		if v, ok := cfg.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// runtimeSettings are the settings a runtime gets, its own and its agents', without
// the credentials WSHUB_AGENT_ENV names (a Pod gets those from
// WSHUB_KUBE_AGENT_SECRET).
func runtimeSettings(cfg Config) []string {
	var env []string
	for agent, command := range cfg.AgentCommands {
		n := strings.TrimPrefix(agent, "agent_")
		env = append(env, "WSHUB_AGENT_"+n+"_COMMAND="+command)
	}
	env = append(env, "WSHUB_SANDBOX="+cfg.Sandbox, "WSHUB_SANDBOX_READONLY="+strings.Join(cfg.SandboxReadOnly, ":"),
		"WSHUB_AGENT_ENV="+strings.Join(cfg.AgentEnv, ","), "WSHUB_AGENT_EGRESS_ALLOW="+strings.Join(cfg.AgentEgressAllow, ","),
		"WSHUB_CLAUDE_BASE_URL="+cfg.ClaudeBaseURL, "WSHUB_CODEX_BASE_URL="+cfg.CodexBaseURL,
		"WSHUB_CLAUDE_PATH="+cfg.ClaudePath, "WSHUB_CODEX_PATH="+cfg.CodexPath,
		"WSHUB_SANDBOX_TMP_BYTES="+strconv.FormatInt(cfg.SandboxTmpBytes, 10), "WSHUB_SANDBOX_SHM_BYTES="+strconv.FormatInt(cfg.SandboxShmBytes, 10),
		"WSHUB_SANDBOX_KEPT_NETWORKS="+strconv.Itoa(cfg.SandboxKeptNetworks), "WSHUB_SANDBOX_KEPT_NETWORK_BYTES="+strconv.FormatInt(cfg.SandboxKeptNetworkBytes, 10),
		"WSHUB_WORKSPACE_DISK_BYTES="+strconv.FormatInt(cfg.WorkspaceDiskBytes, 10), "WSHUB_COMMIT_AUTHOR="+cfg.CommitAuthor,
		"WSHUB_AGENT_LIMITS="+cfg.AgentLimits, "WSHUB_AGENT_PIDS_MAX="+strconv.FormatInt(cfg.AgentPidsMax, 10))
	if cfg.AgentLimitsOptional {
		// A development hub's runtimes run unlimited where it does, rather than refuse.
		env = append(env, "WSHUB_AGENT_LIMITS_OPTIONAL=1")
	}
	if cfg.RuntimeHubLostAfter > 0 { // else the runtime's own default
		env = append(env, "WSHUB_RUNTIME_HUB_LOST_AFTER="+cfg.RuntimeHubLostAfter.String())
	}
	for _, name := range []string{"LANG", "LC_ALL", "TZ"} {
		if v, ok := cfg.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// blobStore opens the attachment store WSHUB_BLOBS names.
func blobStore(cfg Config, store *postgres.Store) (core.BlobStore, error) {
	if err := checkBlobs(cfg.Blobs); err != nil {
		return nil, err
	}
	if cfg.Blobs == BlobsPostgres {
		return postgres.NewBlobs(store), nil
	}
	if cfg.Blobs == BlobsS3 {
		return s3Blobs(cfg)
	}
	blobs, err := assets.NewFS(filepath.Join(cfg.DataDir, "assets"))
	if err != nil {
		return nil, fmt.Errorf("asset store: %w", err)
	}
	return blobs, nil
}
