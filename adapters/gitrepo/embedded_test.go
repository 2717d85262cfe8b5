package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHubGitDoesNotEnterEmbeddedRepositories: a turn makes a repository inside the
// checkout (it is committed as a gitlink), then gives it a clean filter in its own
// .git/config and touches its files. git checks whether a gitlink's repository is
// dirty by running git status inside it, with that repository's config; the hub's
// commit must not, and must still record the embedded repository's new commit.
func TestHubGitDoesNotEnterEmbeddedRepositories(t *testing.T) {
	co, _ := hostileCheckout(t)
	ctx := context.Background()
	prog, marker := tripwire(t, t.TempDir(), "embedded-clean-filter")
	embedded := filepath.Join(co.Dir, "vendor", "lib")
	if err := os.MkdirAll(embedded, 0o755); err != nil {
		t.Fatal(err)
	}
	testGit(t, embedded, "init", "--quiet")
	writeFile(t, filepath.Join(embedded, "a.txt"), "a\n")
	writeFile(t, filepath.Join(embedded, ".gitattributes"), "* filter=evil\n")
	testGit(t, embedded, "add", "-A")
	testGit(t, embedded, "commit", "--quiet", "-m", "one")
	if committed, err := co.CommitAll(ctx, "wshub/work", "turn 1"); err != nil || !committed {
		t.Fatalf("expected the embedded repository committed as a gitlink, got %v, %v", committed, err)
	}

	// The next turn commits in the embedded repository, then arms the filter and
	// leaves the file with a new modification time, so git would have to look inside.
	testGit(t, embedded, "commit", "--quiet", "--allow-empty", "-m", "two")
	want := testGit(t, embedded, "rev-parse", "HEAD")
	testGit(t, embedded, "config", "filter.evil.clean", prog)
	testGit(t, embedded, "config", "filter.evil.required", "true")
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(filepath.Join(embedded, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "the turn's work\n")
	if committed, err := co.CommitAll(ctx, "wshub/work", "turn 2"); err != nil || !committed {
		t.Fatalf("expected turn 2 committed, got %v, %v", committed, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the hub's git ran the embedded repository's clean filter")
	}
	if got := testGit(t, co.Dir, "rev-parse", "HEAD:vendor/lib"); got != want {
		t.Errorf("expected the gitlink at the embedded repository's new commit %s, got %s", want, got)
	}
	if got := testGit(t, co.Dir, "show", "HEAD:work.txt"); got != "the turn's work" {
		t.Errorf("expected work.txt committed, got %q", got)
	}

	// A turn with nothing but a touched file in the embedded repository commits nothing.
	if err := os.Chtimes(filepath.Join(embedded, "a.txt"), later.Add(time.Second), later.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if committed, err := co.CommitAll(ctx, "wshub/work", "turn 3"); err != nil || committed {
		t.Errorf("expected nothing to commit, got %v, %v", committed, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the hub's git ran the embedded repository's clean filter on a clean tree")
	}

	// A turn that deletes the embedded repository: the gitlink goes.
	if err := os.RemoveAll(filepath.Join(co.Dir, "vendor")); err != nil {
		t.Fatal(err)
	}
	if committed, err := co.CommitAll(ctx, "wshub/work", "turn 4"); err != nil || !committed {
		t.Fatalf("expected the removal committed, got %v, %v", committed, err)
	}
	if got := testGit(t, co.Dir, "ls-tree", "HEAD", "vendor"); got != "" {
		t.Errorf("expected no vendor in the commit, got %q", got)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
