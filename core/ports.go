package core

import (
	"context"
	"errors"
	"io"
	"time"
)

// Store is the hub's one database. Every state change runs in InTx; reads outside a
// transaction use the Queries directly.
type Store interface {
	Queries
	TxStore
}

// TxStore runs transactions: what every group's store interface starts from. Outside
// a transaction a group reads only its own statements; inside one it sees all of
// them, because one state change may write several areas' rows in one commit (a
// finished turn writes its reply, its webhook event and its chat outbox rows).
type TxStore interface {
	// InTx runs fn in one transaction, committing when fn returns nil.
	InTx(ctx context.Context, fn func(q Queries) error) error
}

// Queries are the statements of the store, usable inside or outside a transaction.
// Lookups return ErrNoRows when nothing matches; unique violations are ErrConflict;
// a lock not taken in time is ErrContended; an unreachable database is ErrUnavailable.
type Queries interface {
	RuntimeQueries
	RemoteQueries
	TurnEventQueries
	ApprovalQueries
	DeliveryQueries
	ChatQueries
	ChatStatusQueries
	RetentionQueries
	HostQueries
	PullQueries
	CacheQueries
	ForgeEventQueries
	ForgeReviewQueries
	GitHubAppQueries

	AccountQueries
	ProjectQueries
	ProjectSecretQueries
	WorkspaceQueries
	MessageQueries
	AssetQueries
	ReceiptQueries
	WebhookQueries
	QuotaQueries
	MemberQueries
	InvitationQueries
	AppSessionQueries
	AuditQueries
	UsageQueries
	ScheduleQueries
}

// StoredMessage is a message row as the store keeps it: the text sealed.
type StoredMessage struct {
	Message
	SealedText []byte
	// FailureCode, FailureAgent and SealedFailure describe an error turn.
	FailureCode   string
	FailureAgent  string
	SealedFailure []byte
	// StopRequested: someone asked to stop this message's turn.
	StopRequested bool
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
	// OpenInPlace is Open writing the plaintext over sealed, which the caller then no
	// longer reads as sealed.
	OpenInPlace(sealed []byte, binding string) ([]byte, error)
	// Current reports whether sealed is sealed under the key Seal uses now (Reseal
	// skips it).
	Current(sealed []byte) bool
}

// BlobStore keeps bytes by key for every replica of the hub: attachments (already
// sealed) and remote workspaces' branch bundles. Put replaces a whole value, and a
// reader never sees part of one; Get and Open of a missing key are ErrNoRows; Delete of
// a missing key succeeds.
type BlobStore interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	Delete(ctx context.Context, key string) error
	// PutFrom stores the size bytes r holds under key, for values too large to hold in
	// memory. An r that ends early or holds more stores nothing and is an error.
	PutFrom(ctx context.Context, key string, r io.Reader, size int64) error
	// Open reads length bytes of key from offset (length < 0: to the end). A range
	// past the end is cut short, not an error.
	Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

// ErrBlobSize is PutFrom's error for a reader that does not hold the size given.
var ErrBlobSize = errors.New("blob: the reader's length is not the size given")

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
	// Mirror clones (or refreshes) the project's repository and returns where the
	// mirror lives and the repository's default branch. The project's credential, when
	// it has one, is opened (Project.Credential).
	Mirror(ctx context.Context, p *Project) (path, defaultBranch string, err error)
	// Refresh fetches the project's mirror unless it was fetched less than maxAge ago;
	// on error the mirror is left as it was.
	Refresh(ctx context.Context, p *Project, maxAge time.Duration) error
	// Remove deletes the project's mirror from disk (a missing mirror is no error).
	Remove(ctx context.Context, projectID string) error
	// HasBranch reports whether the mirror at path has the branch.
	HasBranch(ctx context.Context, path, branch string) (bool, error)
	// Path is where this hub keeps the project's mirror. The path a project row
	// records is the one of the hub that added it, whose data directory may not be
	// this one's (an admin command, a replica): the hub's own is the one to use.
	Path(projectID string) string
}

// Clock gives the time; tests inject their own.
type Clock interface{ Now() time.Time }

// SystemClock is the real clock, truncated to milliseconds like every wire timestamp.
type SystemClock struct{}

// Now returns the current time at millisecond precision.
func (SystemClock) Now() time.Time { return time.Now().Truncate(time.Millisecond) }

// Random is the source of randomness for ids and secrets (crypto/rand in production).
type Random = io.Reader
