package core

import "testing"

// Every state reads as one of the few badges, an approval waiting wins over working,
// and needs-attention holds exactly the cases the list's filter picks in SQL.
func TestBadgesAndAttention(t *testing.T) {
	for _, tt := range []struct {
		w         Workspace
		awaiting  bool
		badge     Badge
		attention bool
	}{
		{Workspace{State: StateQueued}, false, BadgeQueued, false},
		{Workspace{State: StateSetup}, false, BadgeSettingUp, false},
		{Workspace{State: StateResuming}, false, BadgeSettingUp, false},
		{Workspace{State: StateReady, OpenMessages: true}, false, BadgeWorking, false},
		{Workspace{State: StateReady, OpenMessages: true}, true, BadgeApproval, true},
		{Workspace{State: StateReady, LastTurnID: "t", LastTurnOutcome: OutcomeCompleted}, false, BadgeIdle, false},
		{Workspace{State: StateReady, LastTurnID: "t", LastTurnOutcome: OutcomeError}, false, BadgeIdle, true},
		{Workspace{State: StateReady, LastTurnID: "t", LastPush: PushRefused}, false, BadgeIdle, true},
		{Workspace{State: StatePausing}, false, BadgePaused, false},
		{Workspace{State: StateArchived}, false, BadgeArchived, false},
		{Workspace{State: StateFailed}, false, BadgeFailed, true},
	} {
		if got := tt.w.Badge(tt.awaiting); got != tt.badge {
			t.Errorf("%s (awaiting %v): expected %q, got %q", tt.w.State, tt.awaiting, tt.badge, got)
		}
		if got := tt.w.NeedsAttention(tt.awaiting); got != tt.attention {
			t.Errorf("%s %s %s (awaiting %v): expected attention %v", tt.w.State, tt.w.LastTurnOutcome, tt.w.LastPush, tt.awaiting, tt.attention)
		}
	}
	for _, tt := range []struct {
		w    Workspace
		want string
	}{
		{Workspace{}, ""},
		{Workspace{LastTurnOutcome: OutcomeCompleted}, "completed"},
		{Workspace{LastTurnOutcome: OutcomeInterrupted}, "interrupted"},
		{Workspace{LastTurnOutcome: OutcomeError, LastTurnFailure: FailureAgentError}, "failed: the agent stopped with an error"},
		{Workspace{LastTurnOutcome: OutcomeError, LastTurnFailure: FailureAgentNotInstalled}, "failed: the agent is not installed"},
	} {
		if got := tt.w.LastTurnWords(); got != tt.want {
			t.Errorf("%s/%s: expected %q, got %q", tt.w.LastTurnOutcome, tt.w.LastTurnFailure, tt.want, got)
		}
	}
}
