package core

import (
	"context"
	"slices"
	"time"
)

// WorkspaceState is a workspace's lifecycle state (api.md 3.1). Every change goes
// through the transition table in workspace_state.go.
type WorkspaceState string

// Workspace states (api.md 3.1, behaviour.md state machine).
const (
	StateQueued       WorkspaceState = "queued"
	StateProvisioning WorkspaceState = "provisioning"
	StateSetup        WorkspaceState = "setup"
	StateReady        WorkspaceState = "ready"
	StatePausing      WorkspaceState = "pausing"
	StatePaused       WorkspaceState = "paused"
	StateResuming     WorkspaceState = "resuming"
	StateArchiving    WorkspaceState = "archiving"
	StateArchived     WorkspaceState = "archived"
	StateDeleting     WorkspaceState = "deleting"
	StateDeleted      WorkspaceState = "deleted"
	StateFailed       WorkspaceState = "failed"
)

// Runtime states and startup phases (behaviour.md, derived status fields).
const (
	RuntimeOffline    = "offline"
	RuntimeConnecting = "connecting"
	RuntimeOnline     = "online"

	PhaseAllocating = "allocating"
	PhaseFailed     = "failed"
)

// Agent status values.
const (
	AgentWorking = "working"
	AgentIdle    = "idle"
	AgentUnknown = "unknown"
)

// Runtime modes (api.md 4.1).
// ModeApprovalRequired is the runtime mode in which the agent asks before it does
// what needs approval, and a person decides (approval.go).
const ModeApprovalRequired = "approval-required"

var RuntimeModes = []string{"auto", ModeApprovalRequired, "auto-accept-edits", "auto-accept-edits-and-bash", "full-access"}

// DefaultRuntimeMode is used when create does not name one.
const DefaultRuntimeMode = "full-access"

// AgentIDs are the four agent identifiers of the wire.
var AgentIDs = []string{"agent_1", "agent_2", "agent_3", "agent_4"}

// agentProducts are the programs behind the wire's agent ids: the one catalog the
// bots, the CLI, the app and the runner's messages name agents from.
var agentProducts = map[string]string{"agent_1": "Claude Code", "agent_2": "Codex", "agent_3": "Cursor Agent", "agent_4": "Grok CLI"}

// AgentProduct is the program behind an agent id ("Claude Code"), "" for an id that
// is not one of AgentIDs.
func AgentProduct(id string) string { return agentProducts[id] }

// AgentLabel names an agent for people: "Claude Code (agent_1)", or the id as it is
// when it names no known agent.
func AgentLabel(id string) string {
	if p := agentProducts[id]; p != "" {
		return p + " (" + id + ")"
	}
	return id
}

// Origins say which front-end started a workspace.
const (
	OriginAPI     = "api"
	OriginSlack   = "slack"
	OriginDiscord = "discord"
	OriginApp     = "app"
	// OriginSchedule: a schedule's run started it (its StartedBy names the schedule).
	OriginSchedule = "schedule"
)

// Push results kept as a workspace's LastPush.
const (
	PushPushed  = "pushed"
	PushRefused = "refused"
)

// Workspace is one cloud workspace and the fields its status object is derived from.
type Workspace struct {
	ID          string
	AccountID   string
	ProjectID   string
	ProviderID  string
	Agent       string
	Model       string
	RuntimeMode string
	Branch      string
	BaseRef     string
	Origin      string
	State       WorkspaceState
	StatusCode  string
	// StatusDetail says why in words, for a failed workspace (setup: git's reason).
	StatusDetail string
	// HeadCommit is the last commit a turn left on the branch ("" before any).
	HeadCommit string
	// LastPush is how the last push went: PushPushed, PushRefused, or "" (none).
	LastPush     string
	StartupPhase string
	RuntimeState string
	LatestSeq    int64
	// EventSeq is the seq of the workspace's latest turn event (0: none yet); every
	// event up to it is stored.
	EventSeq int64
	// LastTurn* come from the newest assistant message; kept on the row by the turn
	// transaction so listing needs no per-workspace query.
	LastTurnID          string
	LastTurnOutcome     Outcome
	LastTurnCompletedAt *time.Time
	// LastTurnFailure is the failure code of the last turn when it ended in error.
	LastTurnFailure string
	// TitleSealed is the workspace's title as stored (nil: none yet); Title is it
	// opened, filled by the use cases that show workspaces (withTitles).
	TitleSealed []byte
	Title       string
	// OpenMessages is true when a user message is pending or delivered (computed by the
	// store in the same query that reads the row).
	OpenMessages bool
	// AgentSession is the agent's session id, resumed on the next turn.
	AgentSession string
	// CheckoutPath is the workspace's checkout on its machine.
	CheckoutPath string
	// LeaseToken is set while a worker holds the workspace.
	LeaseToken string
	// Runtime* follow a remote runtime (remote_runtime.go): when its machine was last
	// started (nil: it must be), starts since it last said hello, the runtime process
	// the hub talks to, and when it last called.
	RuntimeStartedAt *time.Time
	RuntimeStarts    int
	RuntimeSession   string
	RuntimeSeenAt    *time.Time
	LastActivityAt   time.Time
	StateChangedAt   time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// StartedBy is who started it (nil: before the hub recorded it). Its MemberID is
	// the member behind them, when known, as the store found it.
	StartedBy *Author
	// Host is the host (WSHUB_HOST_ID) whose data directory holds a local workspace's
	// checkout: only its hubs step the workspace. "" for a remote provider's, and for a
	// local one no hub has claimed yet (host.go).
	Host string
	// Pull is the pull request of the workspace's branch (pull_request.go).
	Pull WorkspacePull
}

// ClosedStates take no messages or uploads (behaviour.md); a workspace in any other
// state is live.
var ClosedStates = []WorkspaceState{StateArchiving, StateArchived, StateDeleting, StateDeleted, StateFailed}

// AcceptsMessages reports whether sends and uploads are taken in the current state.
func (w *Workspace) AcceptsMessages() bool { return !slices.Contains(ClosedStates, w.State) }

// AgentStatus derives agentStatus as behaviour.md fixes it.
func (w *Workspace) AgentStatus() string {
	switch {
	case w.OpenMessages && w.AcceptsMessages():
		return AgentWorking
	case w.LastTurnID != "":
		return AgentIdle
	default:
		return AgentUnknown
	}
}

// LastTurn is the most recent finished agent turn (api.md 2.2).
type LastTurn struct {
	TurnID      string
	Outcome     Outcome
	CompletedAt time.Time
}

// LastTurnInfo returns the last turn, or nil when the agent never answered.
func (w *Workspace) LastTurnInfo() *LastTurn {
	if w.LastTurnID == "" || w.LastTurnCompletedAt == nil {
		return nil
	}
	return &LastTurn{TurnID: w.LastTurnID, Outcome: w.LastTurnOutcome, CompletedAt: *w.LastTurnCompletedAt}
}

// WorkspaceQueries are the store statements of workspace rows.
type WorkspaceQueries interface {
	InsertWorkspace(ctx context.Context, w *Workspace) error
	// GetWorkspace returns a workspace that is not deleted.
	GetWorkspace(ctx context.Context, accountID, id string) (*Workspace, error)
	// LockWorkspace reads a workspace that is not deleted and holds its row lock.
	LockWorkspace(ctx context.Context, accountID, id string) (*Workspace, error)
	ListWorkspaces(ctx context.Context, accountID string) ([]*Workspace, error)
	// ListWorkspacePage lists the workspaces q picks, newest first.
	ListWorkspacePage(ctx context.Context, q WorkspacePageQuery) ([]*Workspace, error)
	// AwaitingApproval names those of the workspaces ids with an approval pending.
	AwaitingApproval(ctx context.Context, ids []string) ([]string, error)
	// WorkspacesByID reads the account's workspaces among ids, deleted ones too (a
	// page naming what its rows came from).
	WorkspacesByID(ctx context.Context, accountID string, ids []string) ([]*Workspace, error)
	// SetWorkspaceTitle stores a workspace's sealed title.
	SetWorkspaceTitle(ctx context.Context, id string, sealed []byte) error
	// WorkspaceUsingBranch names the live workspace of a project that holds a branch.
	WorkspaceUsingBranch(ctx context.Context, projectID, branch string) (string, error)
	NewestWorkspace(ctx context.Context, accountID string) (*Workspace, error)
	// SetWorkspaceState moves a workspace from one state to another (compare-and-set),
	// with the status fields derived from the new state.
	SetWorkspaceState(ctx context.Context, id string, from WorkspaceState, to StateChange) (bool, error)
	// NextSeq allocates the next message seq of a workspace (under its row lock).
	NextSeq(ctx context.Context, workspaceID string, at time.Time) (int64, error)
}
