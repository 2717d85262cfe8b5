package coretest

import (
	"context"
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
	pullsSet chan string
}

var _ core.Store = (*store)(nil)

func (s *store) SetWorkspacePull(ctx context.Context, workspaceID string, p core.WorkspacePull) error {
	err := s.Store.SetWorkspacePull(ctx, workspaceID, p)
	if err == nil {
		select {
		case s.pullsSet <- workspaceID:
		default: // nobody waits for so many: the test reads the rows
		}
	}
	return err
}

// AwaitPullRecorded waits until the workspace's pull request is recorded outside a
// turn (a background check, or a person's ask), failing t after eventWait.
func (c *Core) AwaitPullRecorded(t testing.TB, workspaceID string) {
	t.Helper()
	timeout := time.After(eventWait)
	for {
		select {
		case id := <-c.store.pullsSet:
			if id == workspaceID {
				return
			}
		case <-timeout:
			t.Fatalf("workspace %s: no pull request recorded within %s", workspaceID, eventWait)
		}
	}
}
