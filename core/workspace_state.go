package core

import (
	"context"
	"fmt"
	"slices"
)

// transitions is behaviour.md's workspace state machine: the only moves allowed.
// Creating a workspace puts it in queued; every later change is checked here.
var transitions = map[WorkspaceState][]WorkspaceState{
	StateQueued:       {StateProvisioning, StateFailed, StateDeleting},
	StateProvisioning: {StateSetup, StateFailed, StateDeleting},
	StateSetup:        {StateReady, StateFailed, StateDeleting},
	StateReady:        {StatePausing, StateArchiving, StateDeleting, StateFailed},
	StatePausing:      {StatePaused, StateDeleting},
	StatePaused:       {StateResuming, StateArchiving, StateDeleting},
	StateResuming:     {StateReady, StateFailed, StateDeleting},
	StateArchiving:    {StateArchived, StateDeleting},
	StateArchived:     {StateResuming, StateDeleting},
	StateDeleting:     {StateDeleted},
	StateFailed:       {StateDeleting},
	StateDeleted:      {},
}

// CanMoveTo reports whether the state machine allows from -> to.
func (from WorkspaceState) CanMoveTo(to WorkspaceState) bool {
	return slices.Contains(transitions[from], to)
}

// checkMove is the guard every state change passes: a move the table does not allow
// is a bug in the hub, refused before it reaches the store.
func checkMove(id string, from, to WorkspaceState) error {
	if !from.CanMoveTo(to) {
		return fmt.Errorf("workspace %s: %s -> %s is not a transition of the state machine", id, from, to)
	}
	return nil
}

// setState is the one way core changes a workspace's state: checked against the table,
// then a compare-and-set in the store (false when the workspace was no longer in from).
func setState(ctx context.Context, q Queries, id string, from WorkspaceState, change StateChange) (bool, error) {
	if err := checkMove(id, from, change.State); err != nil {
		return false, err
	}
	return q.SetWorkspaceState(ctx, id, from, change)
}

// stopsMachine: the machine of a workspace entering this state is stopped or gone.
func (s WorkspaceState) stopsMachine() bool {
	return s == StatePaused || s == StateArchived || s == StateDeleted || s == StateFailed
}
