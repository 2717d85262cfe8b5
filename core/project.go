package core

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
