package core

import "context"

import "time"

// Project states (api.md 3.4): connected -> preparing -> ready, or failed.
const (
	ProjectConnected = "connected"
	ProjectPreparing = "preparing"
	ProjectReady     = "ready"
	ProjectFailed    = "failed"
)

// Project network settings (wshub admin project add|update --network).
const (
	NetworkFull = "full"
	NetworkNone = "none"
)

// ValidNetwork reports whether n is a project network setting.
func ValidNetwork(n string) bool { return n == NetworkFull || n == NetworkNone }

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
	// Network is what agent turns in the project's workspaces may reach: NetworkFull
	// or NetworkNone (the sandbox gets no network at all, loopback included).
	Network string
	// MirrorPath is where the mirror clone lives (local provider).
	MirrorPath string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// RemovedAt is set once the operator removed the project: it is gone from listings
	// and takes no new workspace; workspaces that had it keep naming it.
	RemovedAt *time.Time
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
