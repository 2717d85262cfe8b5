package core

import "testing"

// The table is behaviour.md's state machine, row by row; nothing else is allowed.
func TestWorkspaceStateMachine(t *testing.T) {
	allowed := map[[2]WorkspaceState]bool{}
	add := func(froms []WorkspaceState, to WorkspaceState) {
		for _, f := range froms {
			allowed[[2]WorkspaceState{f, to}] = true
		}
	}
	add([]WorkspaceState{StateQueued}, StateProvisioning)
	add([]WorkspaceState{StateProvisioning}, StateSetup)
	add([]WorkspaceState{StateSetup}, StateReady)
	add([]WorkspaceState{StateQueued, StateProvisioning, StateSetup}, StateFailed)
	add([]WorkspaceState{StateReady}, StatePausing)
	add([]WorkspaceState{StatePausing}, StatePaused)
	add([]WorkspaceState{StatePaused}, StateResuming)
	add([]WorkspaceState{StateResuming}, StateReady)
	add([]WorkspaceState{StateReady, StatePaused}, StateArchiving)
	add([]WorkspaceState{StateArchiving}, StateArchived)
	add([]WorkspaceState{StateArchived}, StateResuming)
	add([]WorkspaceState{StateQueued, StateProvisioning, StateSetup, StateReady, StatePausing, StatePaused, StateResuming,
		StateArchiving, StateArchived, StateFailed}, StateDeleting)
	add([]WorkspaceState{StateDeleting}, StateDeleted)
	add([]WorkspaceState{StateReady, StateResuming}, StateFailed)

	all := []WorkspaceState{StateQueued, StateProvisioning, StateSetup, StateReady, StatePausing, StatePaused, StateResuming,
		StateArchiving, StateArchived, StateDeleting, StateDeleted, StateFailed}
	for _, from := range all {
		if _, ok := transitions[from]; !ok {
			t.Errorf("state %s has no row in the table", from)
		}
		for _, to := range all {
			want := allowed[[2]WorkspaceState{from, to}]
			if got := from.CanMoveTo(to); got != want {
				t.Errorf("%s -> %s: expected allowed=%v, got %v", from, to, want, got)
			}
			if err := checkMove("ws_1", from, to); (err == nil) != want {
				t.Errorf("checkMove %s -> %s: expected error=%v, got %v", from, to, !want, err)
			}
		}
	}
}
