package replicas_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
)

// pushUpstream commits a new file to the project's repository, as a teammate's push.
func pushUpstream(t *testing.T, repo, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(repo, name), []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hubtest.Git(t, repo, "add", name)
	hubtest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "add "+name)
}

func readyWorkspace(t *testing.T, h *hubtest.Hub) map[string]any {
	t.Helper()
	id := hubtest.CreateWorkspace(t, h, "")
	return hubtest.WaitFor(t, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
}

func TestWorkspacesStartFromCurrentCode(t *testing.T) {
	t.Parallel()
	var dataDir string
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { dataDir, c.MirrorMaxAge = c.DataDir, 0 }))
	checkout := func(ws map[string]any) string {
		return filepath.Join(dataDir, "workspaces", ws["workspaceId"].(string), "checkout")
	}
	readyWorkspace(t, h) // the mirror as the project was added
	pushUpstream(t, h.Project.Repository, "PUSHED.md")
	ws := readyWorkspace(t, h)
	if _, err := os.Stat(filepath.Join(checkout(ws), "PUSHED.md")); err != nil {
		t.Fatalf("expected the commit pushed upstream in the next workspace's checkout: %v", err)
	}
	if ws["statusCode"] != "ready" {
		t.Errorf("expected statusCode ready, got %v", ws["statusCode"])
	}

	// The repository is gone: the next workspace starts from the mirror it has, and its
	// statusCode says the fetch failed.
	if err := os.Rename(h.Project.Repository, h.Project.Repository+".moved"); err != nil {
		t.Fatal(err)
	}
	ws = readyWorkspace(t, h)
	if ws["statusCode"] != core.StatusMirrorStale {
		t.Errorf("expected statusCode %s, got %v", core.StatusMirrorStale, ws["statusCode"])
	}
	if _, err := os.Stat(filepath.Join(checkout(ws), "PUSHED.md")); err != nil {
		t.Errorf("expected the workspace made from the mirror as last fetched: %v", err)
	}
}

func TestAFreshMirrorIsNotFetchedAgain(t *testing.T) {
	t.Parallel()
	var dataDir string
	h := hubtest.StartRuntime(t, hubtest.WithConfig(func(c *hub.Config) { dataDir, c.MirrorMaxAge = c.DataDir, time.Hour }))
	readyWorkspace(t, h)
	pushUpstream(t, h.Project.Repository, "LATER.md")
	ws := readyWorkspace(t, h)
	if _, err := os.Stat(filepath.Join(dataDir, "workspaces", ws["workspaceId"].(string), "checkout", "LATER.md")); err == nil {
		t.Fatalf("expected a mirror younger than WSHUB_MIRROR_MAX_AGE reused, not fetched again")
	}
}

// A project added by a hub with another data directory (an admin command run with
// another WSHUB_DATA_DIR, a replica with a disk of its own) works on this one: its
// mirror is this hub's cache of the repository, made here when it is missing. A
// default branch the repository lacks is refused, at add and at update.
func TestAProjectAddedElsewhereGetsAMirrorHere(t *testing.T) {
	t.Parallel()
	h := hubtest.StartRuntime(t)
	other := h.Beside(t, func(c *hub.Config) { c.DataDir = t.TempDir() })
	ctx := context.Background()
	repo := hubtest.GitRepo(t)
	p, err := other.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Name: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Service.Admin.PrepareProject(ctx, p); err != nil || p.State != core.ProjectReady {
		t.Fatalf("expected the project ready where it was added, got %s %v", p.State, err)
	}
	// That data directory is on another host: nothing of it is here.
	if err := os.RemoveAll(other.Config.DataDir); err != nil {
		t.Fatal(err)
	}
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"projectId": p.ID, "agent": "agent_1", "model": "m", "prompt": "write here"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	ws := hubtest.WaitFor(t, h, id, "idle after one turn", hubtest.IdleAfterTurns(1))
	if lt := ws["lastTurn"].(map[string]any); lt["outcome"] != "completed" {
		t.Fatalf("expected the turn completed on this hub, got %v", ws)
	}

	bad, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: h.Account.ID, Repository: repo, Name: "bad", DefaultBranch: "nosuch"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Service.Admin.PrepareProject(ctx, bad); err != nil || bad.State != core.ProjectFailed || !strings.Contains(bad.FailureReason, `no branch "nosuch"`) {
		t.Fatalf("expected a default branch the repository lacks refused, got %s %q %v", bad.State, bad.FailureReason, err)
	}
	nosuch := "nosuch"
	_, err = h.Service.Admin.UpdateProject(ctx, core.UpdateProjectInput{ProjectID: p.ID, DefaultBranch: &nosuch})
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Code != core.CodeInvalidRequest || !strings.Contains(ce.Detail, `no branch "nosuch"`) {
		t.Fatalf("expected the update refused, got %v", err)
	}
}
