package hub_test

import (
	"os"
	"path/filepath"
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
	id := createWorkspace(t, h, "")
	return waitFor(t, h, id, "ready", func(ws map[string]any) bool { return ws["state"] == "ready" })
}

func TestWorkspacesStartFromCurrentCode(t *testing.T) {
	t.Parallel()
	var dataDir string
	h := startRuntime(t, hubtest.WithConfig(func(c *hub.Config) { dataDir, c.MirrorMaxAge = c.DataDir, 0 }))
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
	h := startRuntime(t, hubtest.WithConfig(func(c *hub.Config) { dataDir, c.MirrorMaxAge = c.DataDir, time.Hour }))
	readyWorkspace(t, h)
	pushUpstream(t, h.Project.Repository, "LATER.md")
	ws := readyWorkspace(t, h)
	if _, err := os.Stat(filepath.Join(dataDir, "workspaces", ws["workspaceId"].(string), "checkout", "LATER.md")); err == nil {
		t.Fatalf("expected a mirror younger than WSHUB_MIRROR_MAX_AGE reused, not fetched again")
	}
}
