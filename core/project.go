package core

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Project states (api.md 3.4): connected -> preparing -> ready, or failed.
const (
	ProjectConnected = "connected"
	ProjectPreparing = "preparing"
	ProjectReady     = "ready"
	ProjectFailed    = "failed"
)

// Project network settings (wshub admin project add|update --network).
const (
	// NetworkFull is outbound access to the internet from a network namespace of the
	// sandbox's own: the hub's host (its loopback, its own addresses), private and
	// link-local addresses (the cloud metadata service) are refused.
	NetworkFull = "full"
	// NetworkNone is no network at all, loopback included.
	NetworkNone = "none"
	// NetworkHost shares the host's network namespace: the agent reaches whatever the
	// hub's host reaches, its loopback and the metadata service included. An explicit,
	// logged opt-in for projects that need the host's private network.
	NetworkHost = "host"
)

// Networks are the project network settings, the default first.
var Networks = []string{NetworkFull, NetworkNone, NetworkHost}

// ValidNetwork reports whether n is a project network setting.
func ValidNetwork(n string) bool { return slices.Contains(Networks, n) }

// errNetwork refuses a network setting that is not one of Networks.
func errNetwork(n string) error {
	return Errorf(CodeInvalidRequest, "network is %s, not %q", strings.Join(Networks, ", "), n)
}

// Project is a repository connected to the account.
type Project struct {
	ID            string
	AccountID     string
	Repository    string
	DisplayName   string
	DefaultBranch string
	State         string
	// FailureReason says why preparation failed; empty otherwise.
	FailureReason string
	// Push makes the runtime push the workspace branch after each turn.
	Push bool
	// Network is what agent turns in the project's workspaces may reach: NetworkFull,
	// NetworkNone or NetworkHost.
	Network string
	// Forge is the kind of forge the repository is on (ForgeGitHub, ...; "" none known).
	Forge string
	// PullRequests is when the hub opens a pull request: PullRequestsOff, Draft or Ready.
	PullRequests string
	// CredentialKind says which credential the project has (CredentialToken, ...; ""
	// none: the hub-wide one is used). It is shown; the credential never is.
	CredentialKind string
	// SealedCredential is the credential as stored, sealed to the project.
	SealedCredential []byte
	// Credential is the credential opened, set by core just before the hub's own git
	// or forge calls use it; nil when the project has none or it was not needed.
	Credential *ProjectCredential
	// MirrorPath is where the mirror clone lives: as recorded, where the hub that added
	// the project put it; core sets it to this hub's own (RepoMirror.Path) before it
	// hands the project to the machines.
	MirrorPath string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// RemovedAt is set once the operator removed the project: it is gone from listings
	// and takes no new workspace; workspaces that had it keep naming it.
	RemovedAt *time.Time
	// Environment is the project's own environment settings (JSON of an Environment),
	// which win over the repository's files; nil when it has none.
	Environment []byte
	// RemoteGuarded keeps the hub's git to public addresses for this repository: set
	// when an account's owner gave it in the app (the operator's repositories may be
	// on the hub's own network). Its name was checked then; what it resolves to is
	// checked, and pinned, at every git command.
	RemoteGuarded bool
}

// ProjectQueries are the store statements of connected repositories (projects).
type ProjectQueries interface {
	CreateProject(ctx context.Context, p *Project) error
	UpdateProject(ctx context.Context, p *Project) error
	GetProject(ctx context.Context, accountID, id string) (*Project, error)
	// GetProjectByID reads any account's project (operator commands).
	GetProjectByID(ctx context.Context, id string) (*Project, error)
	// ListProjects lists the account's projects that are not removed.
	ListProjects(ctx context.Context, accountID string) ([]*Project, error)
	// ShareProject reads a project that is not removed and holds it against removal
	// until the transaction ends (ErrNoRows: none, or removed).
	ShareProject(ctx context.Context, accountID, id string) (*Project, error)
	// LockProject reads any project and holds it against creates until the transaction ends.
	LockProject(ctx context.Context, id string) (*Project, error)
	// LiveWorkspacesOfProject lists the ids of the project's workspaces that take messages.
	LiveWorkspacesOfProject(ctx context.Context, projectID string, closed []WorkspaceState) ([]string, error)
	// RemoveProject marks the project removed and drops it as a chat default.
	RemoveProject(ctx context.Context, id string, at time.Time) error
}
