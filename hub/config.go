// Package hub assembles the hub from configuration: store, adapters, core, the HTTP
// front-end, the chat bots and the background jobs. cmd/wshub and the end-to-end tests
// share it, so tests run the same wiring as production.
package hub

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/wshub/wshub/adapters/agents"
	"github.com/wshub/wshub/core"
)

// Config is the hub's environment. Every variable is documented in the README.
type Config struct {
	// DatabaseURL is the PostgreSQL connection string.
	DatabaseURL string `env:"DATABASE_URL,required"`
	// Addr is the listen address of the API and health endpoints.
	Addr string `env:"WSHUB_ADDR" envDefault:":8080"`
	// MetricsAddr is the listen address of /metrics (Prometheus), which is not
	// authenticated: "" (the default) serves no metrics at all. Loopback or a network
	// only the monitoring reaches, e.g. 127.0.0.1:9090; never the public port.
	MetricsAddr string `env:"WSHUB_METRICS_ADDR"`
	// MetricsPprof also serves Go's profiles (/debug/pprof/) on the metrics listener,
	// for measuring the hub under load: off by default, as they show the hub's
	// internals and a CPU profile costs CPU while it runs.
	MetricsPprof bool `env:"WSHUB_METRICS_PPROF"`
	// DataDir holds project mirrors, workspace checkouts and (with Blobs "file")
	// attachment blobs.
	DataDir string `env:"WSHUB_DATA_DIR" envDefault:".data"`
	// HostID names the host this hub runs on ("": the machine's hostname). A local
	// workspace's checkout is in one host's data directory, and only the hubs of that
	// host step it: replicas with disks of their own need names of their own, and a
	// name that outlives the process (a container's hostname changes when it is made
	// again). Letters, digits, '.', '-' and '_', at most 63.
	HostID string `env:"WSHUB_HOST_ID"`
	// HostHeartbeat is how often the hub records its host alive; HostLostAfter how long
	// a host may go unseen before it is lost and its local workspaces fail machine_lost
	// (at least three heartbeats: one late heartbeat does not lose a host). Longer
	// rides out longer outages (a host's reboot) at the cost of a dead host's
	// workspaces showing ready, and taking messages, for that long.
	HostHeartbeat time.Duration `env:"WSHUB_HOST_HEARTBEAT" envDefault:"30s"`
	HostLostAfter time.Duration `env:"WSHUB_HOST_LOST_AFTER" envDefault:"10m"`
	// Blobs says where attachment bytes (sealed) live: "file" (the default; under
	// DataDir, so one host, or replicas sharing that disk), "postgres" (the database:
	// replicas with no shared disk read what any wrote, at the cost of the database's
	// size, backups and I/O) or "s3" (an S3-compatible bucket, the S3* settings: any
	// number of replicas, any size). "" is "file".
	Blobs string `env:"WSHUB_BLOBS" envDefault:"file"`
	// S3Endpoint (https://host[:port]; http to a loopback host only), S3Bucket (which
	// must exist: the hub does not make it), S3Region ("": asked of the server) and
	// the credentials, each given or read from a file (_FILE, as mounted secrets
	// are), are the bucket of Blobs "s3". S3Prefix goes before every key, so that
	// hubs or other users can share a bucket.
	S3Endpoint            string `env:"WSHUB_S3_ENDPOINT"`
	S3Bucket              string `env:"WSHUB_S3_BUCKET"`
	S3Region              string `env:"WSHUB_S3_REGION"`
	S3AccessKeyID         string `env:"WSHUB_S3_ACCESS_KEY_ID"`
	S3AccessKeyIDFile     string `env:"WSHUB_S3_ACCESS_KEY_ID_FILE,file"`
	S3SecretAccessKey     string `env:"WSHUB_S3_SECRET_ACCESS_KEY"`
	S3SecretAccessKeyFile string `env:"WSHUB_S3_SECRET_ACCESS_KEY_FILE,file"`
	S3Prefix              string `env:"WSHUB_S3_PREFIX"`
	// PublicURL is the hub's public address; webhooks may not point at its host, and
	// the app's sign-in returns to it.
	PublicURL string `env:"WSHUB_PUBLIC_URL"`
	// TrustedProxies are the proxies in front of the hub (addresses or CIDR ranges,
	// comma-separated): a request from one is taken to come from the address its
	// X-Forwarded-For names.
	TrustedProxies []string `env:"WSHUB_TRUSTED_PROXIES" envSeparator:","`
	// OIDCIssuer, OIDCClientID and OIDCClientSecret are the OpenID Connect provider
	// people sign in to the app with (issuer "": none); OIDCName names it on the
	// sign-in button.
	OIDCIssuer       string `env:"WSHUB_OIDC_ISSUER"`
	OIDCClientID     string `env:"WSHUB_OIDC_CLIENT_ID"`
	OIDCClientSecret string `env:"WSHUB_OIDC_CLIENT_SECRET"`
	OIDCName         string `env:"WSHUB_OIDC_NAME"`
	// OIDCSlackIssuer stands in for Slack's issuer, whose claims alone name a Slack
	// team and user (tests: their own provider; "": https://slack.com).
	OIDCSlackIssuer string `env:"-"`
	// AppSessionIdle and AppSessionMax end an app session idle that long, and one that
	// old whatever its use.
	AppSessionIdle time.Duration `env:"WSHUB_APP_SESSION_IDLE" envDefault:"12h"`
	AppSessionMax  time.Duration `env:"WSHUB_APP_SESSION_MAX" envDefault:"168h"`
	// AppInsecure lets the app's session cookie travel over plain http (the
	// development hub on loopback sets it; never a production hub).
	AppInsecure bool `env:"-"`
	// ContentKey is the base64 AES-256 key that seals message text, attachments and
	// webhook secrets. Without it the endpoints that must seal answer 503.
	ContentKey string `env:"WSHUB_CONTENT_KEY"`
	// ContentKeys is the same during a key rotation: the current key first, then older
	// keys kept only to open what they sealed until `wshub admin reseal` has re-sealed
	// it (comma- or space-separated; docs/operations.md). With both set, ContentKey
	// must be the first of ContentKeys.
	ContentKeys string `env:"WSHUB_CONTENT_KEYS"`
	// HTTPReadTimeout bounds reading one request, headers and body (a 20 MiB upload
	// must arrive within it); HTTPWriteTimeout writing one response; HTTPIdleTimeout the
	// wait for the next request on a keep-alive connection.
	HTTPReadTimeout  time.Duration `env:"WSHUB_HTTP_READ_TIMEOUT" envDefault:"60s"`
	HTTPWriteTimeout time.Duration `env:"WSHUB_HTTP_WRITE_TIMEOUT" envDefault:"60s"`
	HTTPIdleTimeout  time.Duration `env:"WSHUB_HTTP_IDLE_TIMEOUT" envDefault:"60s"`
	// GitHTTPSToken (or the file GitHTTPSTokenFile) is the token the hub's git sends to
	// https remotes that ask for credentials (private repositories), with GitHTTPSUser
	// (default x-access-token). Never part of a repository URL, never given to agents.
	GitHTTPSToken     string `env:"WSHUB_GIT_HTTPS_TOKEN"`
	GitHTTPSTokenFile string `env:"WSHUB_GIT_HTTPS_TOKEN_FILE,file"`
	GitHTTPSUser      string `env:"WSHUB_GIT_HTTPS_USER"`
	// GitSSHKeyFile is a deploy key the hub's git uses for ssh remotes.
	GitSSHKeyFile string `env:"WSHUB_GIT_SSH_KEY_FILE"`
	// MirrorMaxAge: a project's mirror older than this is fetched when a workspace is
	// set up, so workspaces start from current code (0: fetch for every workspace).
	MirrorMaxAge time.Duration `env:"WSHUB_MIRROR_MAX_AGE" envDefault:"1m"`
	// IdleTimeout pauses a ready workspace with no activity for this long.
	IdleTimeout time.Duration `env:"WSHUB_IDLE_TIMEOUT" envDefault:"10m"`
	// TurnTimeout ends a turn that runs longer as interrupted.
	TurnTimeout time.Duration `env:"WSHUB_TURN_TIMEOUT" envDefault:"30m"`
	// APIRate and APIBurst are each API key's token bucket on this replica: requests a
	// second on average, and at once (APIRate 0: no limit).
	APIRate  float64 `env:"WSHUB_API_RATE" envDefault:"100"`
	APIBurst int     `env:"WSHUB_API_BURST" envDefault:"200"`
	// WorkspaceDiskBytes is each workspace's disk quota, its checkout and the agent's
	// home together: over it a turn's work is not committed, and the reply says why.
	WorkspaceDiskBytes int64 `env:"WSHUB_WORKSPACE_DISK_BYTES" envDefault:"10737418240"`
	// MaxStreamsPerKey bounds each API key's open event streams on this replica.
	MaxStreamsPerKey int `env:"WSHUB_MAX_STREAMS_PER_KEY" envDefault:"20"`
	// MaxStreamsPerAccount bounds each account's open event streams and live app pages
	// together, over all its keys and sessions, on this replica: the per-key bound alone
	// grows with every key an owner makes.
	MaxStreamsPerAccount int `env:"WSHUB_MAX_STREAMS_PER_ACCOUNT" envDefault:"50"`
	// StreamPageRate and StreamPageBurst pace the pages a key's event streams read from
	// the store themselves (resuming from far behind, e.g. Last-Event-ID 0 on a long
	// workspace): a bucket per key of that many pages (of up to 500 events) a second,
	// and at once (StreamPageRate 0: no pace). Live events cost no page.
	StreamPageRate  float64 `env:"WSHUB_STREAM_PAGE_RATE" envDefault:"5"`
	StreamPageBurst int     `env:"WSHUB_STREAM_PAGE_BURST" envDefault:"10"`
	// MaxWorkspaces, MaxOpenMessages, MaxRunningTurns and MaxKeys are the default quotas of
	// every account: live workspaces per account, messages waiting per workspace,
	// turns of one account running at once on all replicas (an operator sets an
	// account's own with wshub admin account update).
	MaxWorkspaces   int `env:"WSHUB_MAX_WORKSPACES" envDefault:"1000"`
	MaxOpenMessages int `env:"WSHUB_MAX_OPEN_MESSAGES" envDefault:"200"`
	MaxRunningTurns int `env:"WSHUB_MAX_RUNNING_TURNS" envDefault:"50"`
	// MaxKeys is the default number of API keys (not revoked) an account may hold: each
	// key has its own rate limit and streams, so their number bounds what one account
	// can take of a replica.
	MaxKeys int `env:"WSHUB_MAX_KEYS" envDefault:"50"`
	// MaxSchedules is the number of schedules an account may hold, paused ones too:
	// each tick starts work, so their number bounds what one account's timetable takes.
	MaxSchedules int `env:"WSHUB_MAX_SCHEDULES" envDefault:"50"`
	// CommitAuthor is who the commits of the agents' work are by, "Name <email>".
	CommitAuthor string `env:"WSHUB_COMMIT_AUTHOR" envDefault:"wshub <wshub@localhost>"`
	// BranchMaxObjectBytes bounds one file of a remote runtime's commits, inflated,
	// and BranchMaxBytes what a workspace's uploads may add to the hub's copy of its
	// branch on disk; MaxConcurrentImports how many uploads the hub takes at once.
	BranchMaxObjectBytes int64 `env:"WSHUB_BRANCH_MAX_OBJECT_BYTES" envDefault:"104857600"`
	BranchMaxBytes       int64 `env:"WSHUB_BRANCH_MAX_BYTES" envDefault:"1073741824"`
	MaxConcurrentImports int   `env:"WSHUB_MAX_CONCURRENT_IMPORTS" envDefault:"2"`
	// CacheMaxBytes caps each project's saved environment caches in the blob store,
	// the least recently used evicted past it (0: no cache is saved or restored).
	CacheMaxBytes int64 `env:"WSHUB_CACHE_MAX_BYTES" envDefault:"5368709120"`
	// DiffTimeout bounds the computation of one page of the app's diff; MaxDiffsPerAccount
	// how many one account may have computed at once on this replica; DiffLargeFile is
	// the size past which a changed file's versions are not read (the page gives its
	// size, not its lines or patch).
	DiffTimeout        time.Duration `env:"WSHUB_DIFF_TIMEOUT" envDefault:"20s"`
	MaxDiffsPerAccount int           `env:"WSHUB_MAX_DIFFS_PER_ACCOUNT" envDefault:"2"`
	DiffLargeFile      int64         `env:"WSHUB_DIFF_LARGE_FILE" envDefault:"1048576"`
	// DiffGit is the git program of the diff page ("": git on PATH); tests count its
	// runs with a wrapper.
	DiffGit string `env:"-"`
	// Git is the program of the hub's own git on mirrors and local checkouts (fetch,
	// commit, push; "": git on PATH); tests record what each run is given.
	Git string `env:"-"`
	// ApprovalTimeout denies an approval nobody answered for this long.
	ApprovalTimeout time.Duration `env:"WSHUB_APPROVAL_TIMEOUT" envDefault:"10m"`
	// ChatStatusEvery is the least time between two edits of a thread's turn status
	// message (at most one edit every 2 seconds per thread). Not an
	// environment setting: tests and benchmarks shorten it.
	ChatStatusEvery time.Duration `env:"-"`
	// Self is the wshub executable, which serves Claude Code's permission prompt tool
	// in the approval-required mode (set by wshub serve; tests build one).
	Self string `env:"-"`
	// WebhookAllowInsecure admits http and loopback webhook targets: tests and
	// development only, never in production (the hub logs a warning when it is on).
	WebhookAllowInsecure bool `env:"WSHUB_WEBHOOK_ALLOW_INSECURE" envDefault:"false"`
	// WebhookConcurrency bounds the webhook delivery attempts in flight per hub; 0 takes
	// the deliveries role off this replica, as it did before Roles (others deliver).
	WebhookConcurrency int `env:"WSHUB_WEBHOOK_CONCURRENCY" envDefault:"16"`
	// WebhookLeaseFor is how long a delivery claim lasts: after a crash, attempts that
	// were in flight are made again once it runs out. It must exceed the 10-second
	// attempt limit, or a slow attempt could be claimed twice.
	WebhookLeaseFor time.Duration `env:"WSHUB_WEBHOOK_LEASE_FOR" envDefault:"60s"`
	// WebhookPoll is the delivery worker's backstop poll; retries start at most this
	// late after they fall due.
	WebhookPoll time.Duration `env:"WSHUB_WEBHOOK_POLL" envDefault:"1s"`
	// WebhookTimeout is the acknowledgement limit of an attempt: 10 s by api.md; only
	// tests shorten it.
	WebhookTimeout time.Duration `env:"-"`
	// WebhookResolver looks up webhook hosts and the hub's public host, to refuse an
	// alias of the hub (nil: the system's resolver; tests: one that stays on loopback).
	WebhookResolver *net.Resolver `env:"-"`
	// ArchiveAfter archives a workspace paused this long (0: never).
	ArchiveAfter time.Duration `env:"WSHUB_ARCHIVE_AFTER" envDefault:"168h"`
	// DeleteAfter deletes a workspace archived this long (0: never).
	DeleteAfter time.Duration `env:"WSHUB_DELETE_AFTER" envDefault:"720h"`
	// Roles are the parts of the background work Hub.Run does on this replica
	// (WSHUB_ROLES, comma-separated; every role unless set). A Config built in code
	// names its own: none, there, runs no job.
	Roles Roles `env:"WSHUB_ROLES" envDefault:"worker,deliveries,chat,sweeps"`
	// MaxActiveWorkspaces bounds the workspaces the worker steps at once (turns run in
	// parallel across workspaces, one at a time within each); 0 takes the worker role
	// off this replica, as it did before Roles (others run the turns).
	MaxActiveWorkspaces int `env:"WSHUB_MAX_ACTIVE_WORKSPACES" envDefault:"4"`
	// WorkerPoll is the worker's backstop poll when no NOTIFY arrives.
	WorkerPoll time.Duration `env:"WSHUB_WORKER_POLL" envDefault:"2s"`
	// LeaseFor is how long a worker's claim on a workspace lasts without renewal; after a
	// crash, a running turn is recovered (ended interrupted) once its lease runs out.
	LeaseFor time.Duration `env:"WSHUB_LEASE_FOR" envDefault:"30s"`
	// SweepEvery is the interval of the lifecycle and expiry sweeps.
	SweepEvery time.Duration `env:"WSHUB_SWEEP_EVERY" envDefault:"30s"`
	// Retention is how long idempotency receipts, handled chat events, settled chat
	// replies and notices, webhook deliveries (and their events) and sweep tick records
	// are kept; an hourly sweep deletes older ones. At least 720h: behaviour.md keeps receipts at least 30 days. Longer
	// keeps more history for operators at the cost of table size.
	Retention time.Duration `env:"WSHUB_RETENTION" envDefault:"720h"`
	// MigrateOnStart applies pending migrations when serving (under goose's lock).
	MigrateOnStart bool `env:"WSHUB_MIGRATE_ON_START" envDefault:"true"`
	// ForgeEvents takes the forges' webhooks on /forge/{github,gitlab,gitea}/events and
	// works through them; off, those routes are not mounted and the chat queues are not
	// polled for them. Each project still needs its webhook secret.
	ForgeEvents bool `env:"WSHUB_FORGE_EVENTS"`
	// SlackBotToken (xoxb-...) turns the Slack bot on: Web API calls and file downloads.
	SlackBotToken string `env:"WSHUB_SLACK_BOT_TOKEN"`
	// SlackSigningSecret verifies Events API requests on POST /slack/events.
	SlackSigningSecret string `env:"WSHUB_SLACK_SIGNING_SECRET"`
	// SlackAppToken (xapp-...) receives events over Socket Mode instead of HTTP.
	SlackAppToken string `env:"WSHUB_SLACK_APP_TOKEN"`
	// SlackAPIURL replaces https://slack.com/api/ (tests).
	SlackAPIURL string `env:"WSHUB_SLACK_API_URL"`
	// DiscordBotToken turns the Discord bot on: the gateway session and REST calls.
	DiscordBotToken string `env:"WSHUB_DISCORD_BOT_TOKEN"`
	// DiscordPublicKey (hex) verifies requests to POST /discord/interactions.
	DiscordPublicKey string `env:"WSHUB_DISCORD_PUBLIC_KEY"`
	// DiscordAppID is the application id; with it the bot registers /workspace.
	DiscordAppID string `env:"WSHUB_DISCORD_APP_ID"`
	// DiscordClientSecret is the Discord application's OAuth2 secret: with it, people
	// sign in to the app with Discord (the application id is its client id).
	DiscordClientSecret string `env:"WSHUB_DISCORD_CLIENT_SECRET"`
	// DiscordHTTPClient replaces the client the Discord bot uses (tests: a fake Discord).
	DiscordHTTPClient *http.Client `env:"-"`
	// Sandbox confines agent processes: "bwrap" (bubblewrap, the default; the hub
	// refuses to start when it is missing or cannot make namespaces here) or "none"
	// (agents run as the hub's user and can read everything it can: development on a
	// machine without user namespaces only; the hub logs a warning).
	Sandbox string `env:"WSHUB_SANDBOX" envDefault:"bwrap"`
	// SandboxReadOnly are more host paths agents see read-only, for agent CLIs
	// installed outside /usr and /opt (colon-separated, like PATH).
	SandboxReadOnly []string `env:"WSHUB_SANDBOX_READONLY" envSeparator:":"`
	// AgentEgressAllow opens destinations the project network "full" refuses (loopback,
	// private and link-local addresses, the host's own) to every agent: CIDRs or
	// addresses (every port and protocol), or host:port (TCP to that port only; names
	// resolved at start-up). For an internal package mirror, say (comma-separated).
	AgentEgressAllow []string `env:"WSHUB_AGENT_EGRESS_ALLOW" envSeparator:","`
	// SandboxTmpBytes and SandboxShmBytes cap each sandbox's /tmp and /dev/shm, which
	// are memory (0: 1 GiB and 256 MiB).
	SandboxTmpBytes int64 `env:"WSHUB_SANDBOX_TMP_BYTES"`
	SandboxShmBytes int64 `env:"WSHUB_SANDBOX_SHM_BYTES"`
	// SandboxKeptNetworks bounds the workspaces whose network namespaces (and pasta) are
	// kept between their turns, and SandboxKeptNetworkBytes what those may take, each
	// counted as its pasta's 32 MiB (0: 32 and 1 GiB; -1 keeps none, every turn makes its
	// own).
	SandboxKeptNetworks     int   `env:"WSHUB_SANDBOX_KEPT_NETWORKS"`
	SandboxKeptNetworkBytes int64 `env:"WSHUB_SANDBOX_KEPT_NETWORK_BYTES"`
	// AgentLimits holds each turn to its workspace's size (memory, vCPUs) and
	// AgentPidsMax processes in a cgroup of its own: "cgroup" (the default; the hub
	// refuses to start when it cannot make one here) or "off" (turns have no limit of
	// their own; the hub logs a warning).
	AgentLimits  string `env:"WSHUB_AGENT_LIMITS" envDefault:"cgroup"`
	AgentPidsMax int64  `env:"WSHUB_AGENT_PIDS_MAX" envDefault:"4096"`
	// AgentLimitsOptional runs turns without limits where no cgroup can be had, and
	// logs why, instead of refusing to start (the development hub sets it; never a
	// production hub).
	AgentLimitsOptional bool `env:"-"`
	// LocalCPU and LocalMemoryMiB are the size of the local provider's workspaces, and so
	// the limits of their turns (0: the host's vCPUs and memory).
	LocalCPU       int   `env:"WSHUB_LOCAL_CPU"`
	LocalMemoryMiB int64 `env:"WSHUB_LOCAL_MEMORY_MIB"`
	// AgentEnv names the variables of the hub's environment agents get, typically their
	// credentials (comma-separated, e.g. ANTHROPIC_API_KEY,OPENAI_API_KEY). Agents get
	// nothing else of the hub's environment.
	AgentEnv []string `env:"WSHUB_AGENT_ENV" envSeparator:","`
	// ClaudeBaseURL is the Anthropic Messages API Claude Code calls instead of
	// Anthropic's, for teams behind an LLM gateway (Claude Code's ANTHROPIC_BASE_URL,
	// e.g. https://llm.example.com/anthropic). Claude Code then sends nothing else
	// anywhere (no telemetry, no error reports).
	ClaudeBaseURL string `env:"WSHUB_CLAUDE_BASE_URL"`
	// CodexBaseURL is the OpenAI Responses API Codex calls instead of OpenAI's, up to
	// /responses (e.g. https://llm.example.com/openai/v1), with the key in
	// OPENAI_API_KEY (named in WSHUB_AGENT_ENV).
	CodexBaseURL string `env:"WSHUB_CODEX_BASE_URL"`
	// ClaudePath and CodexPath are the CLIs' executables, when not found as claude and
	// codex on PATH.
	ClaudePath string `env:"WSHUB_CLAUDE_PATH"`
	CodexPath  string `env:"WSHUB_CODEX_PATH"`
	// AgentCommands binds agent ids to commands (WSHUB_AGENT_<N>_COMMAND), read separately.
	AgentCommands map[string]string `env:"-"`
	// Environ is the environment the configuration was read from (os.Environ's form),
	// whose variables the hub passes on to runtimes and agents (WSHUB_AGENT_ENV's,
	// PATH, LANG); nil, in a Config built in code, is the process's.
	Environ []string `env:"-"`
	// Providers are the machine providers workspaces may run on: "local" (this host,
	// in the hub's sandbox), "process" (a `wshub runtime` process of its own per
	// workspace), "kubernetes" (a Pod per workspace). Without local, the hub runs no
	// agent itself, and neither needs nor checks bubblewrap. Empty: local.
	Providers []string `env:"WSHUB_PROVIDERS" envSeparator:"," envDefault:"local"`
	// DefaultProvider is the provider of a workspace whose create names none and whose
	// account has none of its own ("": local when enabled, else the first listed).
	DefaultProvider string `env:"WSHUB_DEFAULT_PROVIDER"`
	// RuntimeHubURL is the hub's URL as remote runtimes reach it (the process provider's
	// default: http://127.0.0.1 on WSHUB_ADDR's port).
	RuntimeHubURL string `env:"WSHUB_RUNTIME_HUB_URL"`
	// RuntimeProgram is the wshub binary process runtimes run (default: this one).
	RuntimeProgram string `env:"WSHUB_RUNTIME_PROGRAM"`
	// Kube* configure the kubernetes provider (docs/kubernetes.md).
	Kubeconfig    string `env:"WSHUB_KUBECONFIG"`
	KubeNamespace string `env:"WSHUB_KUBE_NAMESPACE" envDefault:"wshub"`
	KubeImage     string `env:"WSHUB_KUBE_IMAGE"`
	// KubeImageAllow are the images a project's environment may name for its Pods
	// (patterns, * matching within a path segment); none: every Pod runs KubeImage.
	KubeImageAllow         []string          `env:"WSHUB_KUBE_IMAGE_ALLOW" envSeparator:","`
	KubeServiceAccount     string            `env:"WSHUB_KUBE_SERVICE_ACCOUNT"`
	KubeNodeSelector       map[string]string `env:"WSHUB_KUBE_NODE_SELECTOR" envSeparator:"," envKeyValSeparator:"="`
	KubeStorageClass       string            `env:"WSHUB_KUBE_STORAGE_CLASS"`
	KubeVolumeSize         string            `env:"WSHUB_KUBE_VOLUME_SIZE" envDefault:"10Gi"`
	KubeCPU                int               `env:"WSHUB_KUBE_CPU" envDefault:"2"`
	KubeMemoryMiB          int64             `env:"WSHUB_KUBE_MEMORY_MIB" envDefault:"4096"`
	KubeAgentSecret        string            `env:"WSHUB_KUBE_AGENT_SECRET"`
	KubeImagePullPolicy    string            `env:"WSHUB_KUBE_IMAGE_PULL_POLICY"`
	KubeUnschedulableAfter time.Duration     `env:"WSHUB_KUBE_UNSCHEDULABLE_AFTER" envDefault:"2m"`
	// RuntimeOfflineAfter: a remote runtime not heard from this long is restarted.
	RuntimeOfflineAfter time.Duration `env:"WSHUB_RUNTIME_OFFLINE_AFTER" envDefault:"90s"`
	// RuntimeStartTimeout: a started machine whose runtime has not said hello this long
	// after is started again (MaxRuntimeStarts times, then the workspace fails).
	RuntimeStartTimeout time.Duration `env:"WSHUB_RUNTIME_START_TIMEOUT" envDefault:"5m"`
	// RuntimeHubLostAfter is passed to the remote runtimes this hub starts: one that
	// reaches no hub this long stops its turn (its work committed on its disk) and
	// exits. Above the longest outage a restart or upgrade of every replica takes, or
	// the runtimes give up during it; 0 in a Config built in code: the runtime's 10m.
	RuntimeHubLostAfter time.Duration `env:"WSHUB_RUNTIME_HUB_LOST_AFTER" envDefault:"10m"`
}

// Role is a part of the background work Hub.Run does. Every replica serves the API and
// listens for NOTIFY (the API's long polls and event streams wait on it); the roles say
// which of the jobs it runs besides.
type Role string

const (
	// RoleWorker steps workspaces: their lifecycle and their agents' turns.
	RoleWorker Role = "worker"
	// RoleDeliveries sends webhook deliveries.
	RoleDeliveries Role = "deliveries"
	// RoleChat holds the chat bots' connections (Slack's Socket Mode, Discord's
	// gateway), handles their events and posts turn replies, notices and statuses.
	RoleChat Role = "chat"
	// RoleSweeps runs the periodic sweeps and watches the kubernetes provider's Pods
	// for machines that cannot run.
	RoleSweeps Role = "sweeps"
)

// AllRoles are every role, a replica's default.
var AllRoles = Roles{RoleWorker, RoleDeliveries, RoleChat, RoleSweeps}

// Roles is a set of roles, spelled in WSHUB_ROLES as their names, comma-separated.
type Roles []Role

// Has reports whether role is among r.
func (r Roles) Has(role Role) bool { return slices.Contains(r, role) }

// UnmarshalText reads WSHUB_ROLES, refusing a name that is no role.
func (r *Roles) UnmarshalText(text []byte) error {
	var roles Roles
	for name := range strings.SplitSeq(string(text), ",") {
		if role := Role(strings.TrimSpace(name)); role != "" {
			roles = append(roles, role)
		}
	}
	*r = roles
	return roles.check()
}

// check refuses a role that is none of AllRoles (New checks a Config built in code).
func (r Roles) check() error {
	for _, role := range r {
		if !AllRoles.Has(role) {
			return fmt.Errorf("WSHUB_ROLES: unknown role %q (known: worker, deliveries, chat, sweeps)", role)
		}
	}
	return nil
}

// running are the roles Run takes on: Roles, less those whose concurrency is 0, the
// switches they were before Roles (WSHUB_MAX_ACTIVE_WORKSPACES=0 and
// WSHUB_WEBHOOK_CONCURRENCY=0 still take them off).
func (c Config) running() Roles {
	var out Roles
	for _, role := range c.Roles {
		if role == RoleWorker && c.MaxActiveWorkspaces <= 0 || role == RoleDeliveries && c.WebhookConcurrency <= 0 {
			continue
		}
		out = append(out, role)
	}
	return out
}

// Blob stores WSHUB_BLOBS names.
const (
	BlobsFile     = "file"
	BlobsPostgres = "postgres"
	BlobsS3       = "s3"
)

// checkBlobs refuses a blob store that is not built (New checks a Config built in code).
func checkBlobs(name string) error {
	switch name {
	case "", BlobsFile, BlobsPostgres, BlobsS3:
		return nil
	}
	return fmt.Errorf("WSHUB_BLOBS: unknown blob store %q (known: file, postgres, s3)", name)
}

// LoadConfig reads the configuration from the process's environment.
func LoadConfig() (Config, error) { return LoadConfigFrom(os.Environ()) }

// LoadConfigFrom reads the configuration from environ (os.Environ's form), which it
// keeps (Config.Environ) for what the hub passes on to runtimes and agents: a command
// run with an environment of its own (a test's) reads and passes on that one alone.
func LoadConfigFrom(environ []string) (Config, error) {
	c := Config{Environ: slices.Clone(environ)}
	if err := env.ParseWithOptions(&c, env.Options{Environment: env.ToMap(environ)}); err != nil {
		return c, fmt.Errorf("configuration: %w", namedSettings(err))
	}
	// Checked here as well as in New: unset gives 720h, so anything lower (0 included)
	// was asked for, while New reads a zero in a Config built in code as the default.
	if err := checkRetention(c.Retention); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if err := checkBlobs(c.Blobs); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if c.Blobs == BlobsS3 {
		if _, err := c.s3Options(); err != nil {
			return c, fmt.Errorf("configuration: %w", err)
		}
	}
	// Unset gives 10m: anything not above 0 was asked for.
	if c.RuntimeHubLostAfter <= 0 {
		return c, fmt.Errorf("configuration: WSHUB_RUNTIME_HUB_LOST_AFTER (%s) must be more than 0", c.RuntimeHubLostAfter)
	}
	// The host settings are checked here as well as in New, as the retention is: unset
	// gives the defaults, so a zero was asked for.
	if err := c.hostSettings(); err != nil {
		return c, fmt.Errorf("configuration: %w", err)
	}
	if c.DiscordClientSecret != "" && (c.PublicURL == "" || c.DiscordAppID == "") {
		return c, fmt.Errorf("configuration: WSHUB_DISCORD_CLIENT_SECRET needs WSHUB_DISCORD_APP_ID and WSHUB_PUBLIC_URL (Discord sign-in returns to WSHUB_PUBLIC_URL/app/signin/discord/callback)")
	}
	if c.OIDCIssuer != "" && (c.PublicURL == "" || c.OIDCClientID == "") {
		return c, fmt.Errorf("configuration: WSHUB_OIDC_ISSUER needs WSHUB_OIDC_CLIENT_ID and WSHUB_PUBLIC_URL (the app's sign-in returns to WSHUB_PUBLIC_URL/app/signin/callback)")
	}
	c.AgentCommands = agents.CommandsFromEnv(environ)
	// Resolved once, here: everything under it (mirrors, checkouts, the sandbox's
	// binds) then means the same directory whatever a later working directory is.
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return c, fmt.Errorf("configuration: WSHUB_DATA_DIR: %w", err)
	}
	c.DataDir = abs
	return c, nil
}

// LookupEnv is a variable of the environment the configuration was read from.
func (c Config) LookupEnv(name string) (string, bool) {
	if c.Environ == nil {
		return os.LookupEnv(name)
	}
	// The last of a repeated name, as a child process started with it would see.
	for i := len(c.Environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(c.Environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// namedSettings names the variable, not the Go field, of each setting env could not
// parse: "WSHUB_TURN_TIMEOUT: unable to parse duration: ..." says what to fix.
func namedSettings(err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	errs := make([]error, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			e = pe.Err
			if f, ok := reflect.TypeFor[Config]().FieldByName(pe.Name); ok {
				// A setting's own parser (Roles) may have named it already.
				if name, _, _ := strings.Cut(f.Tag.Get("env"), ","); !strings.HasPrefix(pe.Err.Error(), name+":") {
					e = fmt.Errorf("%s: %w", name, pe.Err)
				}
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// checkRetention refuses a retention period that would prune receipts too young.
func checkRetention(d time.Duration) error {
	if d < core.MinRetention {
		return fmt.Errorf("WSHUB_RETENTION (%s) must be at least %s: idempotency receipts are kept at least 30 days", d, core.MinRetention)
	}
	return nil
}
