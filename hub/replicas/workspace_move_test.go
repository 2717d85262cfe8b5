package replicas_test

import (
	"context"
	"testing"
	"time"

	"github.com/wshub/wshub/hub/hubtest"
)

// A delete that meets the worker's own move of the workspace decides again from the
// state it finds, rather than answering 503: here the worker's archiving → archived is
// held uncommitted on the row while the delete's compare-and-set waits for it, then
// committed, so the delete's first try misses and its second moves archived to
// deleting.
func TestDeleteThatMeetsAnArchiveFinishingGoesThrough(t *testing.T) {
	h := hubtest.Start(t) // no workers: only this test moves the state
	id := hubtest.CreateOn(t, h, "local", "")
	db := h.PG().DB()
	if _, err := db.Exec(`UPDATE workspaces SET state = 'archiving' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	worker, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Rollback()
	if _, err := worker.Exec(`UPDATE workspaces SET state = 'archived' WHERE id = $1 AND state = 'archiving'`, id); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := h.Service.Admin.DeleteWorkspace(ctx, id)
		done <- err
	}()
	// The delete has read "archiving" and waits on the row the worker holds.
	for {
		var waiting int
		if err := db.Get(&waiting, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE 'UPDATE workspaces%'`); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("expected the delete to wait for the worker's change, it returned %v", err)
		case <-ctx.Done():
			t.Fatal("expected the delete to wait on the workspace's row")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := worker.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("expected the delete to go through from archived, got %v", err)
	}
	var state string
	if err := db.Get(&state, `SELECT state FROM workspaces WHERE id = $1`, id); err != nil || state != "deleting" {
		t.Fatalf("expected the workspace deleting, got %q (%v)", state, err)
	}
}
