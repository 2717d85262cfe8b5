package core

import "time"

// Project states (api.md 3.4): connected -> preparing -> ready, or failed.
const (
	ProjectConnected = "connected"
	ProjectPreparing = "preparing"
	ProjectReady     = "ready"
	ProjectFailed    = "failed"
)

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
	// MirrorPath is where the mirror clone lives (local provider).
	MirrorPath string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}
