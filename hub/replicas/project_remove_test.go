package replicas_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

func TestProjectRemove(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	ctx := context.Background()
	p := h.Project
	ws := readyWorkspace(t, h)
	id := ws["workspaceId"].(string)
	failed := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"prompt": "x", "agent": "agent_1", "model": "m",
		"projectId": p.ID, "baseRef": "no-such-ref"}).Expect(t, 201, "").Body["workspace"].(map[string]any)["workspaceId"].(string)
	hubtest.WaitFor(t, h, failed, "failed", func(ws map[string]any) bool { return ws["state"] == "failed" })

	// Refused while a live workspace uses it (the failed one does not count).
	_, err := h.Service.Admin.RemoveProject(ctx, p.ID, false)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.CodeProjectInUse || !strings.Contains(ce.Detail, id) || strings.Contains(ce.Detail, failed) {
		t.Fatalf("expected project_in_use naming %s only, got %v", id, err)
	}
	if r := h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, ""); len(r.Body["projects"].([]any)) != 1 {
		t.Fatalf("expected a refused removal to change nothing, got %s", r.Raw)
	}

	// --force archives it, then removes.
	r, err := h.Service.Admin.RemoveProject(ctx, p.ID, true)
	if err != nil || len(r.Archived) != 1 || r.Archived[0] != id || r.Project.RemovedAt == nil || r.MirrorError != "" {
		t.Fatalf("expected %s archived and the project removed, got %+v, %v", id, r, err)
	}
	hubtest.WaitFor(t, h, id, "archived", func(ws map[string]any) bool { return ws["state"] == "archived" })
	if _, err := os.Stat(p.MirrorPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("expected the mirror %s deleted, stat says %v", p.MirrorPath, err)
	}
	// Again: nothing more to do.
	if again, err := h.Service.Admin.RemoveProject(ctx, p.ID, false); err != nil || again.Project.RemovedAt == nil || len(again.Archived) != 0 {
		t.Fatalf("expected a second removal to succeed doing nothing, got %+v, %v", again, err)
	}

	if r := h.Call("GET", "/v1/api/projects", h.Key, nil).Expect(t, 200, ""); len(r.Body["projects"].([]any)) != 0 {
		t.Fatalf("expected the removed project gone from the list, got %s", r.Raw)
	}
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "projectId": p.ID}).
		Expect(t, 404, core.CodeProjectNotFound)
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).
		Expect(t, 400, core.CodeCloudProjectRequired)
	// The archived workspace keeps its conversation, and stays archived.
	h.Call("GET", "/v1/api/workspaces/"+id+"/messages", h.Key, nil).Expect(t, 200, "")
	if _, err := h.Service.Admin.UnarchiveWorkspace(ctx, id); !errors.As(err, &ce) || ce.Code != core.CodeProjectNotFound {
		t.Fatalf("expected unarchive refused for a removed project, got %v", err)
	}
	if _, err := h.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: p.ID}); !errors.As(err, &ce) || ce.Code != core.CodeNotFound {
		t.Fatalf("expected update of a removed project refused, got %v", err)
	}
	// The repository can be added again, as a new project.
	again := h.NewProject(h.Account.ID, p.Repository)
	if again.ID == p.ID || again.State != core.ProjectReady {
		t.Fatalf("expected a new ready project, got %+v", again)
	}
}

// Creates racing a forced removal: every create either fails with the project gone or
// made a workspace the removal archived; none is left live on a removed project.
func TestProjectRemoveRacesCreates(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	ctx := context.Background()
	body := map[string]any{"agent": "agent_1", "model": "m", "projectId": h.Project.ID}
	var wg sync.WaitGroup
	var removeErr error
	start := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		_, removeErr = h.Service.Admin.RemoveProject(ctx, h.Project.ID, true)
	}()
	answers := make([]*hubtest.Response, 16)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], _ = h.Try("POST", "/v1/api/workspaces", h.Key, body)
		}()
	}
	close(start)
	wg.Wait()
	if removeErr != nil {
		t.Fatalf("forced removal: %v", removeErr)
	}
	for i, a := range answers {
		if a == nil || (a.Status != 201 && a.Code() != core.CodeProjectNotFound) {
			t.Fatalf("create %d: expected 201 or 404 %s, got %+v", i, core.CodeProjectNotFound, a)
		}
	}
	var live int
	if err := h.PG().DB().Get(&live, `SELECT count(*) FROM workspaces WHERE project_id = $1
		AND state NOT IN ('archiving', 'archived', 'deleting', 'deleted', 'failed')`, h.Project.ID); err != nil {
		t.Fatal(err)
	}
	if live != 0 {
		t.Fatalf("expected no live workspace on the removed project, found %d", live)
	}
}
