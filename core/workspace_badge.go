package core

// Badge is a workspace's state as people read it, one of a few words: the app's
// badges (words and colour, never colour alone) and the list's "needs attention". The
// wire's states stay as api.md has them; this folds the passing ones together.
type Badge string

// The badges, in the order a workspace usually passes through them.
const (
	BadgeQueued    Badge = "queued"
	BadgeSettingUp Badge = "setting up"
	BadgeWorking   Badge = "working"
	BadgeApproval  Badge = "waiting for approval"
	BadgeIdle      Badge = "idle"
	BadgeFailed    Badge = "failed"
	BadgePaused    Badge = "paused"
	BadgeArchived  Badge = "archived"
	BadgeDeleting  Badge = "deleting"
)

// Badge is the workspace's badge; awaiting says an approval of it is waiting for a
// person (the list reads those in one query for the whole page).
func (w *Workspace) Badge(awaiting bool) Badge {
	switch w.State {
	case StateQueued:
		return BadgeQueued
	case StateProvisioning, StateSetup, StateResuming:
		return BadgeSettingUp
	case StatePausing, StatePaused:
		return BadgePaused
	case StateArchiving, StateArchived:
		return BadgeArchived
	case StateDeleting, StateDeleted:
		return BadgeDeleting
	case StateFailed:
		return BadgeFailed
	}
	switch {
	case awaiting:
		return BadgeApproval
	case w.AgentStatus() == AgentWorking:
		return BadgeWorking
	default:
		return BadgeIdle
	}
}

// NeedsAttention reports whether someone should look at the workspace: it failed, its
// last turn failed, its last push was refused, or an approval is waiting. The list's
// "needs attention" filter picks the same rows in SQL (ListWorkspacePage).
func (w *Workspace) NeedsAttention(awaiting bool) bool {
	return awaiting || w.State == StateFailed || w.LastTurnOutcome == OutcomeError || w.LastPush == PushRefused
}

// LastTurnWords says how the last turn ended, for lists: "completed", "interrupted",
// or "failed: " and why in words ("" before any turn).
func (w *Workspace) LastTurnWords() string {
	switch w.LastTurnOutcome {
	case "":
		return ""
	case OutcomeError:
		if w.LastTurnFailure == FailureAgentNotInstalled {
			return "failed: the agent is not installed"
		}
		return "failed: the agent stopped with an error"
	default:
		return string(w.LastTurnOutcome)
	}
}
