package core

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Remote runtimes. The providers `process` and `kubernetes` start one machine per
// workspace running `wshub runtime`, which runs the workspace's turns where its
// checkout is and reaches the hub only over the runtime API (/internal/runtime/v1),
// with a token minted each time the machine is started and revoked when it stops. The
// hub's worker starts and stops those machines (remote_start.go); the runtime pulls its
// work (remote.go). The local provider keeps running turns inside the hub (turn.go).

// RemoteMachines starts and stops the machines of a provider whose workspaces run
// their own runtime.
type RemoteMachines interface {
	// Start starts the workspace's machine with its runtime's token and the hub's
	// runtime URL, replacing one that runs (its old token no longer works). image is
	// the one the workspace's environment names ("" none), which a provider that
	// AppliesImages runs the runtime in, or refuses with a *SetupError. A *SetupError
	// ends the workspace failed.
	Start(ctx context.Context, ws *Workspace, token, image string) error
	// AppliesImages says whether Start runs a workspace in the image its environment
	// names (otherwise the image is reported as not applied).
	AppliesImages() bool
	// Stop stops the machine and keeps its disk (pause, archive, a restart).
	Stop(ctx context.Context, ws *Workspace) error
	// Delete removes the machine and its disk.
	Delete(ctx context.Context, ws *Workspace) error
}

// Branches is the hub's copy of remote workspaces' branches: what a new machine checks
// out (the branch as the last turn left it, or baseRef), what turns' commits are added
// to, and where pushes to the project's repository start from. The runtime never holds
// the project's credentials. Every replica serves every workspace: the copy is shared
// (BranchCopies and the BlobStore), each replica's disk a cache of it. p is the
// workspace's project, its MirrorPath this hub's.
type Branches interface {
	// Bundle writes a git bundle of the workspace's branch to w, creating the branch
	// from baseRef in the project's mirror the first time, and returns its head.
	// ErrBaseRefNotFound when baseRef names nothing in the mirror.
	Bundle(ctx context.Context, ws *Workspace, p *Project, w io.Writer) (head string, err error)
	// Import adds the commits of a bundle (the runtime's branch since the head it was
	// given) and returns the branch's new head; the bundle is untrusted input.
	// An upload it will not take is an *Error (CodeCommitsRefused, CodeCommitsTooLarge,
	// CodeImportInProgress) whose Detail is safe to show the runtime; the error around
	// it may carry git's words, for the log only.
	Import(ctx context.Context, ws *Workspace, p *Project, bundle io.Reader) (head string, err error)
	// Head returns the branch's head as the hub holds it ("" before the first checkout).
	Head(ctx context.Context, ws *Workspace) (string, error)
	// Sync brings this hub's cache of the branch up to the shared copy (the app's diff
	// reads the cache); a branch with no copy yet is no error.
	Sync(ctx context.Context, ws *Workspace, p *Project) error
	// Push pushes the branch to the project's repository; a refusal is returned as an
	// error whose text is the remote's reason.
	Push(ctx context.Context, ws *Workspace, p *Project) error
	// Remove deletes the workspace's copy (a missing one is no error).
	Remove(ctx context.Context, ws *Workspace) error
}

// BranchCopy is the shared record of a remote workspace's branch: the commit it
// started from, its head, and the blob holding a bundle of its commits since Base (""
// while Head is Base).
type BranchCopy struct {
	WorkspaceID string
	Base, Head  string
	Bundle      string
	BundleBytes int64
}

// BranchCopies are the store statements of shared branch copies.
type BranchCopies interface {
	// BranchCopy reads the workspace's copy; ErrNoRows before its first checkout.
	BranchCopy(ctx context.Context, workspaceID string) (*BranchCopy, error)
	// CreateBranchCopy records a first copy; false when one exists (another replica
	// made it first: read that one).
	CreateBranchCopy(ctx context.Context, c BranchCopy) (bool, error)
	// SwapBranchCopy moves the copy to c's head and bundle if its head is still
	// oldHead (compare-and-set); false when it moved.
	SwapBranchCopy(ctx context.Context, c BranchCopy, oldHead string) (bool, error)
	// DeleteBranchCopy forgets the copy (none is no error).
	DeleteBranchCopy(ctx context.Context, workspaceID string) error
}

// ErrBaseRefNotFound: the workspace's baseRef names no branch, tag or commit.
var ErrBaseRefNotFound = errors.New("base ref not found")

// Wakeups lets a waiter wait for a NOTIFY with its key instead of polling the store: a
// runtime's long poll for news of its workspace (WorkChannel), a workspace's event feed
// for new turn events (EventsChannel), a turn for a stop or an approval's decision.
type Wakeups interface {
	// Wait returns a channel signalled when channel is notified with key (or when
	// notifications may have been missed), and a function to stop waiting.
	Wait(channel, key string) (<-chan struct{}, func())
}

// RemoteQueries are the store statements of remote runtimes.
type RemoteQueries interface {
	// StartRuntime records a machine (re)started with a new token: its hash, the
	// start time, one more start, no runtime session yet, runtimeState connecting.
	StartRuntime(ctx context.Context, id string, tokenHash []byte, at time.Time) error
	// RevokeRuntime forgets the runtime's token and start, so its calls are refused and
	// the worker starts the machine again when it must.
	RevokeRuntime(ctx context.Context, id string) error
	// LockWorkspaceByRuntimeToken reads and locks the workspace whose runtime token
	// hashes to hash; ErrNoRows when none (unknown or revoked).
	LockWorkspaceByRuntimeToken(ctx context.Context, hash []byte) (*Workspace, error)
	// TouchRuntime records a call of the runtime session (hello resets the start
	// count): runtimeState online when ready, connecting otherwise.
	TouchRuntime(ctx context.Context, id, session string, at time.Time, hello bool) error
	// RevokeSilentRuntimes revokes the runtimes of started workspaces not heard from
	// since seenBefore (or never, and started before startedBefore), marks them
	// offline, and returns their ids.
	RevokeSilentRuntimes(ctx context.Context, seenBefore, startedBefore time.Time, limit int) ([]string, error)
}

// RuntimeInstructions are what a remote runtime needs to run its workspace.
type RuntimeInstructions struct {
	WorkspaceID string
	State       WorkspaceState
	Agent       string
	Model       string
	RuntimeMode string
	Branch      string
	Network     string
	// TurnTimeout bounds each turn (0: none).
	TurnTimeout time.Duration
	// Size is the workspace's machine size, which the runtime holds each turn to.
	Size ProviderSize
}

// RuntimeTurn is one turn handed to a remote runtime.
type RuntimeTurn struct {
	TurnID    string
	MessageID string
	Seq       int64
	Prompt    string
	// SessionID is the agent's session to resume ("" on the first turn).
	SessionID   string
	Attachments []RuntimeAttachment
	// CoAuthor is who the turn's commit names as co-author ("Name <email>", "" none).
	CoAuthor string
	// Env are NAME=value variables the agent gets: the workspace environment's, then
	// the project's secrets marked for the agent.
	Env []string
}

// RuntimeAttachment names a file of a turn's message; the runtime downloads it.
type RuntimeAttachment struct {
	ID   string
	Name string
	Size int64
}

// maxReportCount bounds a reported commit's counts; maxLeftOut and maxLeftOutBytes
// what the runtime says it did not commit.
const (
	maxReportCount  = 1 << 24
	maxLeftOut      = 20
	maxLeftOutBytes = 1024
)

// commitPattern: a full object id, sha1 or sha256.
var commitPattern = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// FitLeftOut makes what a runtime says it did not commit fit the report's bounds:
// at most maxLeftOut lines of at most maxLeftOutBytes, so that a path an agent named
// cannot make the whole report refused.
func FitLeftOut(left []string) []string {
	out := make([]string, 0, min(len(left), maxLeftOut))
	for _, l := range left[:min(len(left), maxLeftOut)] {
		l = strings.ToValidUTF8(strings.NewReplacer("\n", " ", "\r", " ").Replace(l), "\uFFFD")
		if len(l) > maxLeftOutBytes {
			l = strings.ToValidUTF8(l[:maxLeftOutBytes-len("…")], "") + "…"
		}
		out = append(out, l)
	}
	return out
}

// The reply and failure message are capped when recorded, as a local turn's are.

// check refuses a report that is not one the hub could have made itself: an outcome,
// a failure code and a session id of their fixed forms, texts and counts in bounds.
func (rep *RuntimeReport) check() error {
	switch rep.Outcome {
	case OutcomeCompleted, OutcomeInterrupted, OutcomeError:
	default:
		return Errorf(CodeInvalidRequest, "outcome must be completed, interrupted or error")
	}
	switch {
	case rep.FailureCode != "" && rep.FailureCode != FailureAgentNotInstalled && rep.FailureCode != FailureAgentError:
		return Errorf(CodeInvalidRequest, "failureCode must be %s or %s", FailureAgentNotInstalled, FailureAgentError)
	case rep.FailureCode != "" && rep.Outcome != OutcomeError:
		return Errorf(CodeInvalidRequest, "failureCode is for an error outcome only")
	case rep.SessionID != "" && !ValidAgentSession(rep.SessionID):
		return Errorf(CodeInvalidRequest, "sessionId must be at most %d letters, digits, '.', ':', '-' or '_'", maxAgentSession)
	case rep.Committed && !commitPattern.MatchString(rep.Head):
		return Errorf(CodeInvalidRequest, "commit.head must be a full commit id")
	case rep.Files < 0 || rep.Insertions < 0 || rep.Deletions < 0 ||
		rep.Files > maxReportCount || rep.Insertions > maxReportCount || rep.Deletions > maxReportCount:
		return Errorf(CodeInvalidRequest, "commit counts must be 0 to %d", maxReportCount)
	case len(rep.LeftOut) > maxLeftOut:
		return Errorf(CodeInvalidRequest, "leftOut has at most %d entries", maxLeftOut)
	}
	for _, l := range rep.LeftOut {
		if len(l) > maxLeftOutBytes || !utf8.ValidString(l) || strings.ContainsAny(l, "\n\r") {
			return Errorf(CodeInvalidRequest, "each leftOut entry is one line of at most %d bytes", maxLeftOutBytes)
		}
	}
	return nil
}

// RuntimeReport is how a remote runtime's turn ended.
type RuntimeReport struct {
	Outcome        Outcome
	Reply          string
	SessionID      string
	FailureCode    string
	FailureMessage string
	// Commit is what the turn committed; its commits reached the hub by UploadCommits
	// (Head is the branch's head after them). Pushing is the hub's job.
	Committed                    bool
	Head                         string
	Files, Insertions, Deletions int
	// LeftOut are the paths the runtime did not commit, each "path: why".
	LeftOut []string
	// CommitFailed: the runtime could not commit or upload the turn's work.
	CommitFailed bool
}
