package core

import (
	"context"
	"time"
)

// RuntimeQueries are the store statements of the workspace runtime, lifecycle sweeps
// and cron. Statements taking a lease token only act while that lease is held (fencing).
type RuntimeQueries interface {
	// ClaimWorkspaces leases up to limit workspaces that need work: a transitional
	// state, or ready with an open user message (FOR UPDATE SKIP LOCKED). Each row
	// claimed gets its own lease token (token, the claim's, joined with the row's id),
	// returned in LeaseToken. Lease expiry is the database's clock plus leaseFor, and
	// only the database's clock judges it: hubs' clocks may disagree.
	//
	// The claim is fair between accounts: lifecycle steps first (they are short), then
	// the account holding the fewest workspaces (leased, on every replica) first, its
	// workspaces oldest update first, so that a slot goes to the account furthest
	// below its share of the hub's slots, whatever another queued before it. A turn
	// is not claimed while its account has as many running as its quota
	// (accounts.max_running_turns, else maxRunningTurns).
	//
	// A local workspace is claimed only by the hubs of its host (host.go): those of
	// host, which also take on, recording host on it in the claim, a local workspace no
	// host holds yet. With host "" no local workspace is claimed. Remote providers'
	// workspaces are claimed whatever host is.
	ClaimWorkspaces(ctx context.Context, token string, leaseFor time.Duration, limit, maxRunningTurns int, host string) ([]*Workspace, error)
	// OtherAccountWaiting reports whether a workspace of another account than
	// accountID has work the claim would give it now (under the same quota, on host).
	OtherAccountWaiting(ctx context.Context, accountID string, maxRunningTurns int, host string) (bool, error)
	// RenewLease extends a lease to leaseFor from the database's now and returns the
	// workspace's state; ok is false when the lease was lost.
	RenewLease(ctx context.Context, id, token string, leaseFor time.Duration) (state WorkspaceState, ok bool, err error)
	ReleaseLease(ctx context.Context, id, token string) error
	// LockLeasedWorkspace reads and locks a workspace whose lease token is token;
	// ErrNoRows when the lease was lost.
	LockLeasedWorkspace(ctx context.Context, id, token string) (*Workspace, error)
	// GetWorkspaceByID reads any workspace (operator commands).
	GetWorkspaceByID(ctx context.Context, id string) (*Workspace, error)
	// SetWorkspaceEnvironment records the environment a workspace was set up with
	// (JSON), under its lease (token "": a remote runtime's call, which its runtime
	// token authenticated instead).
	SetWorkspaceEnvironment(ctx context.Context, id, token string, env []byte) error
	// WorkspaceEnvironment reads it (nil: none).
	WorkspaceEnvironment(ctx context.Context, id string) ([]byte, error)
	// RecordLastTurn writes lastTurn, the agent session and the activity time, and sets
	// w.OpenMessages to whether a user message is open still (after the turn's own was
	// settled in the same transaction).
	RecordLastTurn(ctx context.Context, w *Workspace) error

	// TakeNextTurn starts a leased workspace's next turn in one atomic statement: it
	// locks the workspace under its lease (ErrNoRows when the lease was lost) and, when
	// the workspace is ready, reads its oldest open user message and marks it delivered
	// at `at` if it was pending.
	TakeNextTurn(ctx context.Context, id, token string, at time.Time) (*NextTurn, error)
	// OldestOpenMessage is the lowest-seq user message that is pending or delivered.
	OldestOpenMessage(ctx context.Context, workspaceID string) (*StoredMessage, error)
	MarkDelivered(ctx context.Context, messageID string, at time.Time) (bool, error)
	// SettleMessage moves a delivered user message to settled.
	SettleMessage(ctx context.Context, messageID string) (bool, error)
	InsertAssistantMessage(ctx context.Context, m *Message, sealedText []byte, f *TurnFailure, sealedFailure []byte) error

	// Lifecycle sweeps: ids of workspaces due for a transition.
	IdleReadyWorkspaces(ctx context.Context, idleSince time.Time, limit int) ([]string, error)
	WorkspacesInStateSince(ctx context.Context, state WorkspaceState, since time.Time, limit int) ([]string, error)
	// ExpirePendingMessages marks pending messages created before `before` expired.
	ExpirePendingMessages(ctx context.Context, before time.Time) (int64, error)
	// FailOpenMessages fails a workspace's pending and delivered user messages.
	FailOpenMessages(ctx context.Context, workspaceID string) (int64, error)
	// FailStrandedMessages fails delivered messages whose workspace can no longer
	// answer (failed or deleted).
	FailStrandedMessages(ctx context.Context) (int64, error)

	// ClaimCronTick takes the job's advisory lock for this transaction and records the
	// tick; false when another replica has it or ran it.
	ClaimCronTick(ctx context.Context, job string, tick, now time.Time) (bool, error)
	// Notify wakes listeners of channel when the transaction commits.
	Notify(ctx context.Context, channel, payload string) error
}

// NextTurn is what TakeNextTurn hands a worker: the turn's workspace, its message and
// what else the turn needs of the workspace's row, read in the same statement.
type NextTurn struct {
	Workspace *Workspace
	// Message is nil when the workspace is not ready or has no open message; otherwise
	// it is as it was read (pending: now delivered; delivered: an earlier turn's, not
	// recorded), with its stop request as of the update.
	Message *StoredMessage
	// Environment is the one the workspace was set up with, as WorkspaceEnvironment
	// reads it (nil: none).
	Environment []byte
	// ChatThreads: the workspace has chat threads, whose status messages follow the
	// turn.
	ChatThreads bool
	// Project is the workspace's project, and Secrets its secrets in name order (their
	// values sealed; without their times), as ListProjectSecrets reads them.
	Project *Project
	Secrets []*ProjectSecret
}

// WorkChannel is the NOTIFY channel that wakes the workspace worker.
const WorkChannel = "wshub_work"

// Machines runs workspaces on a provider's machines. For the local provider the
// "machine" is a checkout under the hub's data directory.
type Machines interface {
	// Allocate reserves the machine (queued/provisioning).
	Allocate(ctx context.Context, ws *Workspace) error
	// Checkout makes the workspace's checkout on a new branch from baseRef and returns
	// its directory. A *SetupError says why setup cannot succeed.
	Checkout(ctx context.Context, ws *Workspace, p *Project) (dir string, err error)
	// Resume makes a paused or archived workspace's checkout usable again.
	Resume(ctx context.Context, ws *Workspace, p *Project) (dir string, err error)
	Pause(ctx context.Context, ws *Workspace) error
	// Archive stops the machine and keeps the checkout.
	Archive(ctx context.Context, ws *Workspace) error
	// Delete removes the machine and its checkout.
	Delete(ctx context.Context, ws *Workspace) error
	// CommitTurn commits the checkout's changes on the workspace branch, pushing when
	// the project asks for it. Committed is false when nothing changed; a refused push
	// is not an error but PushRefused with the remote's reason.
	CommitTurn(ctx context.Context, ws *Workspace, p *Project, message string) (TurnCommit, error)
	// KeepOutOfCommits keeps the files the checkout holds now and git does not track
	// (what setup wrote), and paths (the environment's cached paths), out of the
	// workspace's turn commits, unless the repository tracks them.
	KeepOutOfCommits(ctx context.Context, ws *Workspace, paths []string) error
	// Home is the workspace's home directory for agent processes, kept across turns.
	Home(ws *Workspace) string
	// WriteFile places an attachment inside the checkout and returns its path relative
	// to the checkout.
	WriteFile(ctx context.Context, ws *Workspace, name string, data []byte) (string, error)
}

// SetupError is a provider or setup failure that ends the workspace failed; StatusCode
// is shown as the workspace's statusCode.
type SetupError struct {
	StatusCode string
	// Detail says why in words fit to show the workspace's owner (it becomes the
	// statusDetail): git's own reason, with the hub's paths and credentials taken out.
	Detail string
	// Err is the underlying failure, for the hub's log only.
	Err error
}

func (e *SetupError) Error() string { return e.StatusCode + ": " + e.Detail }

func (e *SetupError) Unwrap() error { return e.Err }

// TurnCommit is what a turn left on its branch.
type TurnCommit struct {
	Committed                    bool
	SHA                          string
	Files, Insertions, Deletions int
	// Pushed: the branch reached the project's repository. PushRefused: the remote (or
	// the way to it) refused it, for PushError's reason. Neither: the project does not
	// push, or nothing was committed.
	Pushed, PushRefused bool
	PushError           string
	// LeftOut are the paths the hub would not commit, a line each, "path: why" (an
	// embedded repository that reaches out of the checkout); set whether or not it
	// committed. One string keeps the struct comparable.
	LeftOut string
	// Failed: the commit itself failed (git refused, or its time ran out); the work
	// stays in the checkout for the next turn's commit, and the head did not move.
	Failed bool
	// Pull is the workspace's pull request after the push (nil: not asked for), and
	// PullNote the reply's line about it.
	Pull     *WorkspacePull
	PullNote string
	// OfferPull: the branch reached a forge where a pull request can be asked for (the
	// project's are off): the threads are offered the button after the first push.
	OfferPull bool
}
