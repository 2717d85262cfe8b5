package coretest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/core"
)

// store is the test's real store, which also tells the test when a workspace's pull
// request was recorded outside a transaction: the check a read of the workspace starts
// in the background, which no notification announces.
type store struct {
	*postgres.Store

	mu sync.Mutex
	// pulls counts each workspace's records, awaited those a wait has seen.
	pulls, awaited map[string]int
	// recorded is closed (and replaced) at each record: it wakes the waits.
	recorded chan struct{}
}

var _ core.Store = (*store)(nil)

func newStore(pg *postgres.Store) *store {
	return &store{Store: pg, pulls: map[string]int{}, awaited: map[string]int{}, recorded: make(chan struct{})}
}

func (s *store) SetWorkspacePull(ctx context.Context, workspaceID string, p core.WorkspacePull) error {
	err := s.Store.SetWorkspacePull(ctx, workspaceID, p)
	if err == nil {
		s.mu.Lock()
		s.pulls[workspaceID]++
		close(s.recorded)
		s.recorded = make(chan struct{})
		s.mu.Unlock()
	}
	return err
}

// AwaitPullRecorded waits for a record of the workspace's pull request made outside a
// turn (a background check, or a person's ask) that no earlier wait has seen, failing
// t after eventWait.
func (c *Core) AwaitPullRecorded(t testing.TB, workspaceID string) {
	t.Helper()
	s := c.store
	timeout := time.After(eventWait)
	for {
		s.mu.Lock()
		if s.pulls[workspaceID] > s.awaited[workspaceID] {
			s.awaited[workspaceID] = s.pulls[workspaceID]
			s.mu.Unlock()
			return
		}
		recorded := s.recorded
		s.mu.Unlock()
		select {
		case <-recorded:
		case <-timeout:
			t.Fatalf("workspace %s: no pull request recorded within %s", workspaceID, eventWait)
		}
	}
}
