package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSHA256ProjectCommits: the config the hub restores before its git calls is the
// one its own clone had, extensions included, so a SHA-256 repository stays
// readable; what a turn adds to the config is still gone.
func TestSHA256ProjectCommits(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	testGit(t, src, "init", "--quiet", "--object-format=sha256", "--initial-branch=main")
	commit(t, src)
	m := &Mirror{Dir: filepath.Join(t.TempDir(), "mirrors")}
	mirror, _, err := m.Mirror(ctx, proj("prj_1", src))
	if err != nil {
		t.Fatal(err)
	}
	co := &Checkout{Dir: filepath.Join(t.TempDir(), "ws_1", "checkout")}
	if err := co.Create(ctx, mirror, "wshub/work", "main"); err != nil {
		t.Fatal(err)
	}
	prog, marker := tripwire(t, t.TempDir(), "fsmonitor")
	testGit(t, co.Dir, "config", "core.fsmonitor", prog)
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "the turn's work\n")

	committed, err := co.CommitAll(ctx, "wshub/work", "turn 1")
	if err != nil || !committed {
		t.Fatalf("expected the turn's work committed, got %v, %v", committed, err)
	}
	if sha := testGit(t, co.Dir, "rev-parse", "HEAD"); len(sha) != 64 {
		t.Errorf("expected a SHA-256 commit id, got %q", sha)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the hub's git ran the fsmonitor the turn set")
	}
	if got := testGit(t, co.Dir, "config", "--list"); strings.Contains(got, "fsmonitor") {
		t.Errorf("expected the turn's fsmonitor gone from the config, got:\n%s", got)
	}
}
