// Package caches_test checks environment caches on a real hub: a repository whose
// .wshub/environment.json names cached paths, workspaces set up one after another,
// the caches saved to and restored from each blob store.
package caches_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
	"github.com/wshub/wshub/internal/testkit/s3test"
)

// setupScript records whether the cached paths were there before it ran (.setup-saw,
// kept out of commits), and fills them when not: deps in the checkout (a copy of the
// key file and 64 KiB that do not compress) and ~/.toolcache in the home.
const setupScript = `set -e
if [ -f deps/marker ] && [ -f "$HOME/.toolcache/tool" ]; then
	echo hit > .setup-saw
else
	echo miss > .setup-saw
	mkdir -p deps "$HOME/.toolcache"
	cat deps.lock > deps/marker
	head -c 65536 /dev/urandom > deps/blob
	echo tool > "$HOME/.toolcache/tool"
fi
`

// startHub runs a hub with its worker on the blob store, caches capped at maxBytes,
// and its project's repository holding an environment with one cache keyed by
// deps.lock. Every workspace fetches the mirror first, so commits made between
// workspaces apply.
func startHub(t testing.TB, blobs string, maxBytes int64, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	h := startBare(t, blobs, maxBytes, opts...)
	commit(t, h.Project.Repository, map[string]string{".wshub/environment.json": environment(t, setupScript, []string{"deps", "~/.toolcache"}, "deps.lock"),
		"deps.lock": "v1\n"})
	return h
}

// startBare runs the hub with its project's repository as hubtest makes it, on no
// network: nothing a setup runs reaches beyond the machine.
func startBare(t testing.TB, blobs string, maxBytes int64, opts ...hubtest.Option) *hubtest.Hub {
	t.Helper()
	var srv *s3test.Server
	if blobs == hub.BlobsS3 {
		srv = s3test.Start(t)
	}
	h := hubtest.Start(t, append([]hubtest.Option{hubtest.WithJobs(), hubtest.WithAgentCommand("agent_1", hubtest.FakeAgent(t)),
		hubtest.WithConfig(func(c *hub.Config) {
			c.Blobs, c.CacheMaxBytes, c.MirrorMaxAge = blobs, maxBytes, 0
			if srv != nil {
				c.S3Endpoint, c.S3Bucket, c.S3Region = srv.Endpoint, srv.Bucket, s3test.Region
				c.S3AccessKeyID, c.S3SecretAccessKey = srv.AccessKeyID, srv.SecretAccessKey
			}
		})}, opts...)...)
	h.SetProjectNetwork(core.NetworkNone)
	return h
}

// environment is a .wshub/environment.json with a setup and one cache.
func environment(t testing.TB, setup string, paths []string, keyFiles ...string) string {
	t.Helper()
	env, err := json.Marshal(map[string]any{"setup": setup, "cache": []map[string]any{{"paths": paths, "keyFiles": keyFiles}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(env)
}

// commit writes files into the repository's checked-out branch and commits them.
func commit(t testing.TB, repo string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hubtest.Git(t, repo, "add", ".")
	hubtest.Git(t, repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "change")
}

// setUp is a workspace made ready: what its setup saw, what it said, how long it took.
type setUp struct {
	id      string
	saw     string
	output  string
	elapsed time.Duration
}

// newWorkspace creates a workspace on baseRef ("" the default branch), waits for it
// to be ready, and reads what its setup saw and said.
func newWorkspace(t testing.TB, h *hubtest.Hub, baseRef string) setUp {
	t.Helper()
	id, start := createWorkspace(t, h, baseRef)
	return readySetUp(t, h, id, start)
}

// createWorkspace creates a workspace on baseRef ("" the default branch).
func createWorkspace(t testing.TB, h *hubtest.Hub, baseRef string) (id string, created time.Time) {
	t.Helper()
	body := map[string]any{"agent": "agent_1", "model": "test-model"}
	if baseRef != "" {
		body["baseRef"] = baseRef
	}
	start := time.Now()
	r := h.Call("POST", "/v1/api/workspaces", h.Key, body).Expect(t, 201, "")
	return r.Body["workspace"].(map[string]any)["workspaceId"].(string), start
}

// readySetUp waits for the workspace to be ready, and reads what its setup saw and
// said.
func readySetUp(t testing.TB, h *hubtest.Hub, id string, start time.Time) setUp {
	t.Helper()
	ws := waitSettled(t, h, id)
	elapsed := time.Since(start)
	if ws["state"] != "ready" {
		t.Fatalf("workspace %s: expected ready, got %v: %v", id, ws["state"], ws["statusDetail"])
	}
	saw, err := os.ReadFile(filepath.Join(h.Config.DataDir, "workspaces", id, "checkout", ".setup-saw"))
	if err != nil {
		t.Fatalf("workspace %s: expected its setup to have run: %v", id, err)
	}
	events, err := h.Service.Workspaces.ListTurnEvents(context.Background(), h.Account, id, 0, core.MaxEventPage)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, e := range events {
		if e.Type == core.EventSetupOutput {
			out.WriteString(e.Delta)
		}
	}
	return setUp{id: id, saw: strings.TrimSpace(string(saw)), output: out.String(), elapsed: elapsed}
}

// waitSettled waits until the workspace is ready or failed.
func waitSettled(t testing.TB, h *hubtest.Hub, id string) map[string]any {
	t.Helper()
	return eventually.Value(t, time.Minute, "workspace "+id+" ready or failed", func() (map[string]any, error) {
		r := h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil)
		if r.Status != 200 {
			return nil, fmt.Errorf("status %d", r.Status)
		}
		ws := r.Body["workspace"].(map[string]any)
		if ws["state"] != "ready" && ws["state"] != "failed" {
			return nil, fmt.Errorf("last seen %v", ws)
		}
		return ws, nil
	})
}

func (s setUp) expect(t testing.TB, saw, said string) {
	t.Helper()
	if s.saw != saw || !strings.Contains(s.output, said) {
		t.Fatalf("workspace %s: expected its setup to see a %s and to say %q, got a %s and:\n%s", s.id, saw, said, s.saw, s.output)
	}
}

// caches are the project's saved caches, the most recently used first.
func caches(t testing.TB, h *hubtest.Hub) []core.ProjectCache {
	t.Helper()
	list, err := h.Service.Caches.List(context.Background(), h.Project.ID)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestTheSecondWorkspaceFindsTheCacheBeforeItsSetup(t *testing.T) {
	t.Parallel()
	for _, blobs := range []string{hub.BlobsFile, hub.BlobsPostgres, hub.BlobsS3} {
		t.Run(blobs, func(t *testing.T) {
			t.Parallel()
			h := startHub(t, blobs, 10<<20)
			cold := newWorkspace(t, h, "")
			cold.expect(t, "miss", "cache deps, ~/.toolcache: none saved for key")
			if !strings.Contains(cold.output, "cache deps, ~/.toolcache: saved 3 files") {
				t.Fatalf("expected the first setup to save its cache, got:\n%s", cold.output)
			}
			saved := caches(t, h)
			if len(saved) != 1 || saved[0].Scope != "main" || saved[0].Files != 3 {
				t.Fatalf("expected one cache of 3 files for main, got %+v", saved)
			}
			warm := newWorkspace(t, h, "")
			warm.expect(t, "hit", "cache deps, ~/.toolcache: restored 3 files (64 KiB) from main")
			if strings.Contains(warm.output, "saved") {
				t.Errorf("expected a hit not to be saved again, got:\n%s", warm.output)
			}
			home, err := os.ReadFile(filepath.Join(h.Config.DataDir, "workspaces", warm.id, "home", ".toolcache", "tool"))
			if err != nil || string(home) != "tool\n" {
				t.Errorf("expected ~/.toolcache restored into the home, got %q (%v)", home, err)
			}
			if after := caches(t, h); len(after) != 1 || !after[0].LastUsedAt.After(saved[0].LastUsedAt) {
				t.Errorf("expected the restore to mark the cache used, got %+v then %+v", saved, after)
			}
			t.Logf("%s: create-to-ready cold %s, warm %s", blobs, cold.elapsed.Round(time.Millisecond), warm.elapsed.Round(time.Millisecond))

			// A changed key file is another key: a miss, saved beside the first.
			commit(t, h.Project.Repository, map[string]string{"deps.lock": "v2\n"})
			changed := newWorkspace(t, h, "")
			changed.expect(t, "miss", "none saved for key")
			if got := caches(t, h); len(got) != 2 {
				t.Fatalf("expected a second cache for the new key, got %+v", got)
			}
		})
	}
}

// As GitHub Actions scopes caches: a workspace on another base reads the default
// branch's caches and its own, and writes its own, which the default branch's
// workspaces do not read.
func TestABranchReadsTheDefaultBranchsCachesButWritesItsOwn(t *testing.T) {
	t.Parallel()
	h := startHub(t, hub.BlobsFile, 10<<20)
	hubtest.Git(t, h.Project.Repository, "branch", "feature") // the same key files as main

	first := newWorkspace(t, h, "feature")
	first.expect(t, "miss", "none saved for key")
	if got := caches(t, h); len(got) != 1 || got[0].Scope != "feature" {
		t.Fatalf("expected the feature workspace to save for feature only, got %+v", got)
	}
	onMain := newWorkspace(t, h, "")
	onMain.expect(t, "miss", "none saved for key")
	again := newWorkspace(t, h, "feature")
	again.expect(t, "hit", "restored 3 files (64 KiB) from feature")

	// With feature's cache dropped, feature reads main's, and does not copy it.
	key := caches(t, h)[0].Key
	if _, err := h.Service.Caches.Drop(context.Background(), h.Project.ID, ""); err != nil {
		t.Fatal(err)
	}
	newWorkspace(t, h, "")
	fromMain := newWorkspace(t, h, "feature")
	fromMain.expect(t, "hit", "restored 3 files (64 KiB) from main")
	if got := caches(t, h); len(got) != 1 || got[0].Scope != "main" || got[0].Key != key {
		t.Fatalf("expected main's cache alone, got %+v", got)
	}
}

// Past the cap, the least recently used caches are evicted, their blobs deleted.
func TestCachesOverTheCapAreEvictedLeastRecentlyUsedFirst(t *testing.T) {
	t.Parallel()
	// One archive (64 KiB that do not compress, and a little) fits; two do not.
	h := startHub(t, hub.BlobsFile, 100<<10)
	newWorkspace(t, h, "").expect(t, "miss", "saved 3 files")
	first := caches(t, h)
	commit(t, h.Project.Repository, map[string]string{"deps.lock": "v2\n"})
	newWorkspace(t, h, "").expect(t, "miss", "saved 3 files")
	kept := caches(t, h)
	if len(first) != 1 || len(kept) != 1 || kept[0].Key == first[0].Key {
		t.Fatalf("expected the older cache evicted for the newer, got %+v then %+v", first, kept)
	}
	blob := func(key string) string { return filepath.Join(h.Config.DataDir, "assets", filepath.FromSlash(key)) }
	if _, err := os.Stat(blob(first[0].BlobKey)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("expected the evicted cache's blob deleted, got %v", err)
	}
	if _, err := os.Stat(blob(kept[0].BlobKey)); err != nil {
		t.Errorf("expected the kept cache's blob there, got %v", err)
	}
}

// Two workspaces of one key set up at once may both miss and both save: one save is
// kept, the other's archive deleted, and neither workspace fails.
func TestTwoSavesOfOneKeyAtOnceKeepOne(t *testing.T) {
	t.Parallel()
	h := startHub(t, hub.BlobsFile, 10<<20)
	first, start := createWorkspace(t, h, "")
	second, _ := createWorkspace(t, h, "")
	var said []string
	for _, id := range []string{first, second} {
		said = append(said, readySetUp(t, h, id, start).output)
	}
	saved := caches(t, h)
	blobs, err := os.ReadDir(filepath.Join(h.Config.DataDir, "assets", "cache_"+h.Project.ID))
	if err != nil || len(saved) != 1 || len(blobs) != 1 || filepath.Base(saved[0].BlobKey) != blobs[0].Name() {
		t.Fatalf("expected one cache and its archive alone, got %+v and %v (%v); the setups said:\n%s", saved, blobs, err, strings.Join(said, "\n"))
	}
}

// An archive that cannot be restored (here: not an archive at all) is a miss, and is
// replaced by the setup's save rather than standing in the way of every later one.
func TestACacheThatCannotBeRestoredIsReplaced(t *testing.T) {
	t.Parallel()
	h := startHub(t, hub.BlobsFile, 10<<20)
	newWorkspace(t, h, "").expect(t, "miss", "saved 3 files")
	bad := caches(t, h)[0]
	if err := os.WriteFile(filepath.Join(h.Config.DataDir, "assets", filepath.FromSlash(bad.BlobKey)), []byte("not an archive"), 0o600); err != nil {
		t.Fatal(err)
	}
	replaced := newWorkspace(t, h, "")
	replaced.expect(t, "miss", "could not be restored (the archive is refused: it is not a cache archive")
	if strings.Contains(replaced.output, "none saved") {
		t.Errorf("expected no word of none saved after one was found, got:\n%s", replaced.output)
	}
	if !strings.Contains(replaced.output, "saved 3 files") {
		t.Fatalf("expected the cache saved again, got:\n%s", replaced.output)
	}
	if got := caches(t, h); len(got) != 1 || got[0].BlobKey == bad.BlobKey {
		t.Fatalf("expected the cache replaced by a new archive, got %+v", got)
	}
	newWorkspace(t, h, "").expect(t, "hit", "restored 3 files")
}

// Caches are written by setup only: what an agent's turn writes into a cached path
// never reaches the next workspace.
func TestATurnNeverWritesTheCache(t *testing.T) {
	t.Parallel()
	h := startHub(t, hub.BlobsFile, 10<<20, hubtest.WithAgentCommand("agent_1", "echo poisoned > deps/poison && echo done"))
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "test-model", "prompt": "poison"}).Expect(t, 201, "")
	id := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	eventually.NoError(t, time.Minute, "a turn", func() error {
		ws := h.Call("GET", "/v1/api/workspaces/"+id, h.Key, nil).Expect(t, 200, "").Body["workspace"].(map[string]any)
		if lt, _ := ws["lastTurn"].(map[string]any); lt != nil {
			if lt["outcome"] != "completed" {
				t.Fatalf("expected the turn completed, got %v", lt)
			}
			return nil
		}
		if ws["state"] == "failed" {
			t.Fatalf("expected a turn, the workspace failed: %v", ws)
		}
		return fmt.Errorf("got %v", ws)
	})
	if _, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", id, "checkout", "deps", "poison")); err != nil {
		t.Fatalf("expected the agent to have written into the cached path: %v", err)
	}
	next := newWorkspace(t, h, "")
	next.expect(t, "hit", "restored 3 files")
	if _, err := os.Stat(filepath.Join(h.Config.DataDir, "workspaces", next.id, "checkout", "deps", "poison")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("expected nothing of the turn in the next workspace's cache, got %v", err)
	}
	if got := caches(t, h); len(got) != 1 || got[0].Files != 3 {
		t.Fatalf("expected the one cache setup saved, got %+v", got)
	}
}

// WSHUB_CACHE_MAX_BYTES=0: no cache is saved or restored, and setup says so.
func TestCachesOffSaveAndRestoreNothing(t *testing.T) {
	t.Parallel()
	h := startHub(t, hub.BlobsFile, 0)
	newWorkspace(t, h, "").expect(t, "miss", "caches: off on this hub; setup runs without them")
	newWorkspace(t, h, "").expect(t, "miss", "caches: off on this hub")
	if got := caches(t, h); len(got) != 0 {
		t.Fatalf("expected no cache saved, got %+v", got)
	}
}
