package core

import (
	"context"
	"io"
	"time"
)

// Store is the hub's one database. Every state change runs in InTx; reads outside a
// transaction use the Queries directly.
type Store interface {
	Queries
	// InTx runs fn in one transaction, committing when fn returns nil.
	InTx(ctx context.Context, fn func(q Queries) error) error
}

// Queries are the statements of the store, usable inside or outside a transaction.
// Lookups return ErrNoRows when nothing matches; unique violations are ErrConflict;
// a lock not taken in time is ErrContended; an unreachable database is ErrUnavailable.
type Queries interface {
	RuntimeQueries
	DeliveryQueries
	ChatQueries
	RetentionQueries

	CreateAccount(ctx context.Context, a *Account) error
	UpdateAccount(ctx context.Context, a *Account) error
	GetAccount(ctx context.Context, id string) (*Account, error)
	// CountWork counts workspaces by state (deleted left out) and open user messages.
	CountWork(ctx context.Context) (*WorkCounts, error)
	// ListAccounts lists every account, oldest first (operator).
	ListAccounts(ctx context.Context) ([]*Account, error)
	// ListAPIKeys lists an account's keys, revoked ones included, oldest first.
	ListAPIKeys(ctx context.Context, accountID string) ([]*APIKey, error)
	// LockAccount takes the account row lock, serialising per-account limits.
	LockAccount(ctx context.Context, id string) error

	CreateAPIKey(ctx context.Context, k *APIKey) error
	RevokeAPIKey(ctx context.Context, id string, at time.Time) (bool, error)
	// AccountByKeyHash returns the account of a key that is not revoked.
	AccountByKeyHash(ctx context.Context, hash []byte) (*Account, error)

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

	InsertWorkspace(ctx context.Context, w *Workspace) error
	// GetWorkspace returns a workspace that is not deleted.
	GetWorkspace(ctx context.Context, accountID, id string) (*Workspace, error)
	// LockWorkspace reads a workspace that is not deleted and holds its row lock.
	LockWorkspace(ctx context.Context, accountID, id string) (*Workspace, error)
	ListWorkspaces(ctx context.Context, accountID string) ([]*Workspace, error)
	// WorkspaceUsingBranch names the live workspace of a project that holds a branch.
	WorkspaceUsingBranch(ctx context.Context, projectID, branch string) (string, error)
	NewestWorkspace(ctx context.Context, accountID string) (*Workspace, error)
	// SetWorkspaceState moves a workspace from one state to another (compare-and-set),
	// with the status fields derived from the new state.
	SetWorkspaceState(ctx context.Context, id string, from WorkspaceState, to StateChange) (bool, error)
	// NextSeq allocates the next message seq of a workspace (under its row lock).
	NextSeq(ctx context.Context, workspaceID string, at time.Time) (int64, error)

	InsertMessage(ctx context.Context, m *Message, sealedText []byte) error
	GetMessage(ctx context.Context, workspaceID, id string) (*StoredMessage, error)
	ListMessages(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*StoredMessage, error)

	InsertAsset(ctx context.Context, a *Asset) error
	GetAsset(ctx context.Context, workspaceID, id string) (*Asset, error)
	// AssetBlobKeys lists the BlobStore keys of the workspace's attachments.
	AssetBlobKeys(ctx context.Context, workspaceID string) ([]string, error)
	// AssetsByID returns the assets among ids that belong to the workspace.
	AssetsByID(ctx context.Context, workspaceID string, ids []string) ([]*Asset, error)

	// ClaimIdempotencyKey inserts r unless (account, scope, key) exists; it waits for a
	// concurrent claim of the same key to finish and then returns the stored receipt.
	// claimed is true when r was inserted.
	ClaimIdempotencyKey(ctx context.Context, r *Receipt) (stored *Receipt, claimed bool, err error)
	SetReceiptResult(ctx context.Context, r *Receipt) error

	CountWebhooks(ctx context.Context, accountID string) (int, error)
	InsertWebhook(ctx context.Context, w *Webhook) error
	ListWebhooks(ctx context.Context, accountID string) ([]*Webhook, error)
	DeleteWebhook(ctx context.Context, accountID, id string) (bool, error)
}

// StoredMessage is a message row as the store keeps it: the text sealed.
type StoredMessage struct {
	Message
	SealedText []byte
	// FailureCode, FailureAgent and SealedFailure describe an error turn.
	FailureCode   string
	FailureAgent  string
	SealedFailure []byte
}

// Receipt records an idempotent request that succeeded.
type Receipt struct {
	AccountID   string
	Scope       string
	Key         string
	Fingerprint []byte
	ResourceID  string
	// Result holds what the replay must return beyond the resource (JSON, use-case owned).
	Result    []byte
	CreatedAt time.Time
}

// Sealer encrypts content at rest, binding each sealed value to the ids that own it.
// A nil Sealer means no content key is configured.
type Sealer interface {
	Seal(plaintext []byte, binding string) ([]byte, error)
	Open(sealed []byte, binding string) ([]byte, error)
	// Current reports whether sealed is sealed under the key Seal uses now (Reseal
	// skips it).
	Current(sealed []byte) bool
}

// BlobStore keeps attachment bytes (already sealed) by key.
type BlobStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) error
}

// Providers lists the machine providers the hub is configured with.
type Providers interface {
	List(ctx context.Context) []Provider
	// Default is the provider used when create names none.
	Default() string
}

// AgentCatalog says which agent ids have a program configured for the machines.
type AgentCatalog interface {
	Available(ctx context.Context) []string
}

// RepoMirror keeps a mirror clone of a project's repository.
type RepoMirror interface {
	// Mirror clones (or refreshes) repository for the project and returns where the
	// mirror lives and the repository's default branch.
	Mirror(ctx context.Context, projectID, repository string) (path, defaultBranch string, err error)
	// Refresh fetches the project's mirror unless it was fetched less than maxAge ago;
	// on error the mirror is left as it was.
	Refresh(ctx context.Context, projectID, repository string, maxAge time.Duration) error
	// Remove deletes the project's mirror from disk (a missing mirror is no error).
	Remove(ctx context.Context, projectID string) error
	// HasBranch reports whether the mirror at path has the branch.
	HasBranch(ctx context.Context, path, branch string) (bool, error)
}

// Clock gives the time; tests inject their own.
type Clock interface{ Now() time.Time }

// SystemClock is the real clock, truncated to milliseconds like every wire timestamp.
type SystemClock struct{}

// Now returns the current time at millisecond precision.
func (SystemClock) Now() time.Time { return time.Now().Truncate(time.Millisecond) }

// Random is the source of randomness for ids and secrets (crypto/rand in production).
type Random = io.Reader
