package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Startup phases beyond allocating (behaviour.md, derived status fields).
const (
	PhaseBooting        = "booting"
	PhaseAuthenticating = "authenticating-runtime"
	PhaseSyncing        = "syncing-repository"
	PhaseStartingAgent  = "starting-agent"
	PhaseRunning        = "running"
)

// statusFor gives the derived fields a workspace shows in a state.
func statusFor(state WorkspaceState) (phase, runtime string) {
	switch state {
	case StateQueued:
		return PhaseAllocating, RuntimeOffline
	case StateProvisioning:
		return PhaseBooting, RuntimeOffline
	case StateSetup:
		return PhaseSyncing, RuntimeConnecting
	case StateResuming:
		return PhaseStartingAgent, RuntimeConnecting
	case StateReady:
		return PhaseRunning, RuntimeOnline
	case StateFailed:
		return PhaseFailed, RuntimeOffline
	default: // pausing, paused, archiving, archived, deleting, deleted
		return PhaseRunning, RuntimeOffline
	}
}

// RuntimeConfig tunes the workspace runtime.
type RuntimeConfig struct {
	TurnTimeout time.Duration
	// ChatStatusEvery is the least time between two edits of a chat thread's turn
	// status (0: DefaultChatStatusEvery).
	ChatStatusEvery time.Duration
	// ApprovalTimeout is how long an approval waits for a decision before it is
	// denied (0: DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// MirrorMaxAge is how old a project's mirror may be when a workspace is set up
	// before it is fetched first (0: always fetched).
	MirrorMaxAge time.Duration
	// MaxConcurrentImports bounds the remote runtimes' commit uploads this hub takes
	// at once (each is git indexing and checking a pack: CPU and disk); more wait for a
	// place (0: DefaultMaxConcurrentImports).
	MaxConcurrentImports int
	// Poll is how often a running turn looks for a stop request when no NOTIFY comes
	// (LISTEN down), as the workers poll for work (0: DefaultStopPoll).
	Poll time.Duration
	Log  *slog.Logger

	// CacheMaxBytes caps each project's saved caches (their archives), the least
	// recently used evicted past it (0: caches are neither saved nor restored).
	CacheMaxBytes int64
}

// DefaultStopPoll is how often a running turn looks for a stop request by itself.
const DefaultStopPoll = 2 * time.Second

// transition moves a leased workspace from its current state under the lease, in one
// transaction; the caller has done the machine work that justifies it.
func (s *Worker) transition(ctx context.Context, ws *Workspace, lease string, to WorkspaceState, statusCode string) error {
	return s.transitionDetail(ctx, ws, lease, to, statusCode, "")
}

// transitionDetail is transition with a statusDetail: why, in words, for a failure.
func (s *Worker) transitionDetail(ctx context.Context, ws *Workspace, lease string, to WorkspaceState, statusCode, detail string) error {
	from := ws.State
	return s.store.InTx(ctx, func(q Queries) error {
		cur, err := q.LockLeasedWorkspace(ctx, ws.ID, lease)
		if err != nil {
			return fmt.Errorf("lock leased %s: %w", ws.ID, err)
		}
		if cur.State != from {
			return fmt.Errorf("workspace %s is %s, not %s: %w", ws.ID, cur.State, from, errStateMoved)
		}
		change := changeTo(to, statusCode, s.clock.Now())
		change.CheckoutPath, change.StatusDetail = ws.CheckoutPath, detail
		if _, err := setState(ctx, q, ws.ID, from, change); err != nil {
			return err
		}
		change.apply(ws)
		if to.stopsMachine() {
			// A stopped machine's runtime may not call again (remote_start.go).
			if err := q.RevokeRuntime(ctx, ws.ID); err != nil {
				return err
			}
		}
		if to == StateFailed {
			// No turn will ever take the workspace's messages: they fail now, in the
			// transaction that fails the workspace, not 24 hours later by expiry.
			if _, err := q.FailOpenMessages(ctx, ws.ID); err != nil {
				return err
			}
			if err := s.in(ctx, q).failureNotices(ws, statusCode); err != nil {
				return err
			}
		}
		return wake(ctx, q, WorkChannel, ws.ID)
	})
}

// errStateMoved: another actor (operator, sweep) changed the state since the claim;
// the worker lets go and the next claim sees the new state.
var errStateMoved = errors.New("state moved")

// StepWorkspace does the next piece of work of a leased workspace: one lifecycle
// transition, or the next turn when it is ready. It returns whether more work may be
// waiting (so the worker steps it again at once).
func (s *Worker) StepWorkspace(ctx context.Context, ws *Workspace, lease string) (more bool, err error) {
	defer func() {
		if errors.Is(err, errStateMoved) {
			// Let go: the next claim steps the workspace from the state it is in now;
			// stepping again here would start from the state this claim read.
			more, err = false, nil
		}
	}()
	if rm := s.remoteFor(ws); rm != nil {
		return s.stepRemote(ctx, rm, ws, lease)
	}
	switch ws.State {
	case StateQueued:
		if err := s.machines.Allocate(ctx, ws); err != nil {
			return false, s.failSetup(ctx, ws, lease, err)
		}
		return true, s.transition(ctx, ws, lease, StateProvisioning, "")
	case StateProvisioning:
		return true, s.transition(ctx, ws, lease, StateSetup, "")
	case StateSetup:
		p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
		if err != nil {
			return false, err
		}
		if err := s.forHub(ctx, p, s.mirror); err != nil {
			return false, s.failSetup(ctx, ws, lease, err)
		}
		// Start from current code: a commit pushed a minute ago is in the new workspace.
		statusCode := ""
		if err := s.mirror.Refresh(ctx, p, s.config.MirrorMaxAge); err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			// Fall back to the mirror as it is: a workspace from the code last fetched
			// beats none, and its statusCode says it may be behind.
			s.log().Warn("mirror fetch failed; the workspace starts from the mirror as it is",
				"workspace", ws.ID, "project", p.ID, "err", err)
			statusCode = StatusMirrorStale
		}
		dir, err := s.machines.Checkout(ctx, ws, p)
		if err != nil {
			return false, s.failSetup(ctx, ws, lease, err)
		}
		ws.CheckoutPath = dir
		detail, err := environments{s}.setupEnvironment(ctx, ws, lease, p)
		if err != nil {
			return false, s.failSetup(ctx, ws, lease, err)
		}
		return true, s.transitionDetail(ctx, ws, lease, StateReady, statusCode, detail)
	case StateResuming:
		p, err := s.store.GetProject(ctx, ws.AccountID, ws.ProjectID)
		if err != nil {
			return false, err
		}
		if err := s.forHub(ctx, p, s.mirror); err != nil {
			return false, err
		}
		dir, err := s.machines.Resume(ctx, ws, p)
		if err != nil {
			if ctx.Err() != nil {
				return false, err
			}
			// The machine is gone: the workspace fails; the reason goes to the log (it
			// names the hub's paths) and the owner reads a plain one.
			return false, s.failSetup(ctx, ws, lease, &SetupError{StatusCode: FailureStatus(FailureMachineLost, ""),
				Detail: "the workspace's machine could not be resumed (its checkout is gone)", Err: err})
		}
		ws.CheckoutPath = dir
		detail, err := environments{s}.updateEnvironment(ctx, ws, p)
		if err != nil {
			return false, err
		}
		return true, s.transitionDetail(ctx, ws, lease, StateReady, "", detail)
	case StatePausing:
		if err := s.machines.Pause(ctx, ws); err != nil {
			return false, err
		}
		return false, s.transition(ctx, ws, lease, StatePaused, "")
	case StateArchiving:
		if err := s.machines.Archive(ctx, ws); err != nil {
			return false, err
		}
		return false, s.transition(ctx, ws, lease, StateArchived, "")
	case StateDeleting:
		if err := s.machines.Delete(ctx, ws); err != nil {
			return false, err
		}
		if err := s.deleteBlobs(ctx, ws); err != nil {
			return false, err
		}
		return false, s.transition(ctx, ws, lease, StateDeleted, "")
	case StateReady:
		return s.runNextTurn(ctx, ws, lease)
	}
	return false, nil
}

// failSetup ends a starting workspace failed when the provider says setup cannot
// succeed; other errors are returned so the claim is retried.
func (s *Worker) failSetup(ctx context.Context, ws *Workspace, lease string, err error) error {
	var se *SetupError
	if !errors.As(err, &se) {
		return err
	}
	s.log().Warn("workspace setup failed", "workspace", ws.ID, "status", se.StatusCode, "detail", se.Detail, "err", se.Err)
	return s.transitionDetail(ctx, ws, lease, StateFailed, se.StatusCode, se.Detail)
}

// ClaimWork leases workspaces that need work for leaseFor. Every claim has its own
// token (each workspace's is in its LeaseToken): a worker still busy under an older
// claim of the same workspace, even in this process, is fenced out of the new one.
func (s *Worker) ClaimWork(ctx context.Context, leaseFor time.Duration, limit int) ([]*Workspace, error) {
	return s.store.ClaimWorkspaces(ctx, s.newLeaseToken(), leaseFor, limit, s.quotas.runningTurns(), s.host.claimHost())
}

// ShouldYield reports whether a worker holding ws, with more of its messages waiting,
// should let it go after a turn so that the slot goes to another account that waits
// (the claim then chooses fairly). Holding on is cheaper when no one else waits: the
// workspace's next turn starts without a claim.
func (s *Worker) ShouldYield(ctx context.Context, ws *Workspace) (bool, error) {
	return s.store.OtherAccountWaiting(ctx, ws.AccountID, s.quotas.runningTurns(), s.host.claimHost())
}

// RenewLease keeps a lease for leaseFor more (by the database's clock) and reports the
// workspace's state, so the worker can stop a turn whose workspace moved on; ok is
// false when the lease is gone.
func (s *Worker) RenewLease(ctx context.Context, id, token string, leaseFor time.Duration) (state WorkspaceState, ok bool, err error) {
	return s.store.RenewLease(ctx, id, token, leaseFor)
}

// ReleaseLease lets go of a workspace.
func (s *Worker) ReleaseLease(ctx context.Context, id, token string) error {
	return s.store.ReleaseLease(ctx, id, token)
}

// ErrLeaseLost is the cause a worker cancels a step's context with when its claim is
// gone: taken by another claim, or not renewed for longer than the lease. Nothing more
// is written under that claim; the claim that takes over deals with the work.
var ErrLeaseLost = errors.New("lease lost")

// newLeaseToken returns a random token for one claim.
func (s kernel) newLeaseToken() string { return NewID(s.rand, "lease_") }

// Sweeps are the cron sweeps: lifecycle timers, message expiry, lost runtimes and
// retention. They run on the worker's adapters.
type Sweeps struct{ w *Worker }

// Worker is the workspace worker's use cases: claim a workspace, step it through its
// lifecycle and run its turns.
type Worker struct {
	outbox
	logger
	store  runtimeStore
	blobs  BlobStore
	mirror RepoMirror
	// envFiles read a project's environment files at a workspace's base (nil: no
	// environment is ever applied).
	envFiles EnvironmentFiles
	machines Machines
	runner   AgentRunner
	config   RuntimeConfig
	// turns is told of every recorded turn (nil: no one).
	turns TurnObserver
	// unrecorded keeps finished turns the store could not take (turn_unrecorded.go).
	unrecorded unrecordedTurns
	// remote are the providers whose machines run their own runtime, by provider id;
	// branches and wake serve those runtimes (remote.go).
	remote   map[string]RemoteMachines
	branches Branches
	wake     Wakeups
	// quotas are the hub's default limits per account (the running turns, here).
	quotas Quotas
	// providers give a workspace's size, which bounds its turns (nil: no size).
	providers Providers
	// host is this hub's host: the local workspaces it claims (host.go).
	host HostConfig
	// pulls open the workspaces' pull requests after their pushes.
	pulls pullRequests

	// caches save and restore the environments' caches.
	caches *envCaches
}

// runtimeStore is what Runtime reads and writes.
type runtimeStore interface {
	TxStore
	RuntimeQueries
	RemoteQueries
	MessageQueries
	ProjectQueries
	ProjectSecretQueries
	AssetQueries
	RetentionQueries
	ApprovalQueries
	MemberQueries
	HostQueries
}

// sizeOf is the size of ws's machine, the zero value when unknown.
func (s *Worker) sizeOf(ctx context.Context, ws *Workspace) ProviderSize {
	if s.providers == nil {
		return ProviderSize{}
	}
	return SizeOf(s.providers.List(ctx), ws.ProviderID)
}
