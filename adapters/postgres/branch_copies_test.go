package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// A branch copy is created once, and its head moves only from the head the mover
// read: of two movers from one head, the second finds it moved.
func TestBranchCopiesMoveByCompareAndSet(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	seedDeliveries(t, store, time.Now(), 0) // an account, a project and workspace ws_l
	copies := postgres.NewBranchCopies(store)

	if _, err := copies.BranchCopy(ctx, "ws_l"); !errors.Is(err, core.ErrNoRows) {
		t.Fatalf("expected no copy before the first checkout, got %v", err)
	}
	first := core.BranchCopy{WorkspaceID: "ws_l", Base: "b0", Head: "b0"}
	if created, err := copies.CreateBranchCopy(ctx, first); !created || err != nil {
		t.Fatalf("expected the first copy created, got %v %v", created, err)
	}
	if created, err := copies.CreateBranchCopy(ctx, core.BranchCopy{WorkspaceID: "ws_l", Base: "other", Head: "other"}); created || err != nil {
		t.Fatalf("expected a second first copy refused quietly, got %v %v", created, err)
	}
	next := core.BranchCopy{WorkspaceID: "ws_l", Base: "b0", Head: "h1", Bundle: "branch_ws_l/h1", BundleBytes: 42}
	if moved, err := copies.SwapBranchCopy(ctx, next, "b0"); !moved || err != nil {
		t.Fatalf("expected the head moved from b0, got %v %v", moved, err)
	}
	if moved, err := copies.SwapBranchCopy(ctx, core.BranchCopy{WorkspaceID: "ws_l", Head: "h2"}, "b0"); moved || err != nil {
		t.Fatalf("expected a move from the stale head b0 refused, got %v %v", moved, err)
	}
	got, err := copies.BranchCopy(ctx, "ws_l")
	if err != nil || *got != next {
		t.Fatalf("expected %+v, got %+v (%v)", next, got, err)
	}
	if err := copies.DeleteBranchCopy(ctx, "ws_l"); err != nil {
		t.Fatal(err)
	}
	if err := copies.DeleteBranchCopy(ctx, "ws_l"); err != nil {
		t.Fatalf("expected deleting no copy to succeed, got %v", err)
	}
}
