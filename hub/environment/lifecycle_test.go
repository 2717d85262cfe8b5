package environment_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// While setup runs the workspace is in setup and its output can be read as it comes;
// the first message waits for it. Archiving and bringing the workspace back runs the
// environment's update script, whose output is events too.
func TestSetupIsWatchedLiveAndUpdateRunsOnResume(t *testing.T) {
	t.Parallel()
	var dataDir string
	h := startHub(t, hubtest.WithConfig(func(c *hub.Config) { dataDir = c.DataDir }))
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{
		"setup": "echo setup started\nwhile [ ! -e release ]; do sleep 0.05; done\nrm release\necho setup ended",
		"update": "echo updating; echo updated > updated.txt"}`})
	id := create(t, h, p, "echo first turn")
	waitFor(t, h, id, "setup started", func(ws map[string]any) bool {
		return ws["state"] == "setup" && strings.Contains(setupOutput(events(t, h, id)), "setup started\n")
	})
	r := h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	if n := len(r.Body["messages"].([]any)); n != 1 {
		t.Errorf("no turn may run while setup runs: %d messages", n)
	}
	// The checkout is on the host (not yet recorded on the workspace, which is not
	// ready): the test lets the setup go on.
	if err := os.WriteFile(filepath.Join(dataDir, "workspaces", id, "checkout", "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, id, "the first turn done", idleAfterTurns(1))
	if got := setupOutput(events(t, h, id)); got != "setup started\nsetup ended\n" {
		t.Errorf("setup output %q", got)
	}

	ctx := context.Background()
	if _, err := h.Service.Admin.ArchiveWorkspace(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, id, "archived", state("archived"))
	if _, err := h.Service.Admin.UnarchiveWorkspace(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, id, "ready again", state("ready"))
	var update []event
	for _, e := range events(t, h, id) {
		if strings.HasPrefix(e.TurnID, "update_") {
			update = append(update, e)
		}
	}
	if len(update) != 2 || update[0].Delta != "updating\n" || update[0].Tool != "update" ||
		update[1].Type != "setup_finished" || update[1].Outcome != "completed" {
		t.Errorf("the update's events: %+v", update)
	}
	if _, err := os.Stat(filepath.Join(checkoutOf(t, h, id), "updated.txt")); err != nil {
		t.Errorf("the update script ran in the checkout: %v", err)
	}
}

// Deleting a workspace while its setup runs stops the setup (the sandbox is ended)
// and the workspace is deleted, not failed.
func TestDeletingAWorkspaceStopsItsSetup(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	marker := filepath.Join(t.TempDir(), "never")
	p, _ := repoWith(t, h, map[string]string{".wshub/environment.json": `{
		"setup": "echo waiting\nsleep 600\necho should not get here"}`})
	id := create(t, h, p, "")
	waitFor(t, h, id, "setup running", func(ws map[string]any) bool {
		return strings.Contains(setupOutput(events(t, h, id)), "waiting\n")
	})
	start := time.Now()
	if _, err := h.Service.Admin.DeleteWorkspace(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	eventually.Within(2*time.Minute, func() bool {
		w, err := h.PG().GetWorkspaceByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return w.State == "deleted"
	})
	if w, _ := h.PG().GetWorkspaceByID(context.Background(), id); w.State != "deleted" {
		t.Fatalf("the workspace should be deleted, it is %s", w.State)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the setup should stop with the workspace; deleting took %s", took)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the setup went on")
	}
}
