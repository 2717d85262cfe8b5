package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestHubGitIgnoresTheHubUsersHome: git reads ~/.config/git/ignore and attributes even
// with GIT_CONFIG_GLOBAL=/dev/null. Whatever the hub user keeps there must not decide
// what a turn's commit holds (nor name a filter for it).
func TestHubGitIgnoresTheHubUsersHome(t *testing.T) {
	co, _ := hostileCheckout(t)
	home := t.TempDir()
	conf := filepath.Join(home, ".config", "git")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(conf, "ignore"), "work.txt\n")
	writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\texcludesFile = "+filepath.Join(conf, "ignore")+"\n")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))

	writeFile(t, filepath.Join(co.Dir, "work.txt"), "the turn's work\n")
	committed, err := co.CommitAll(context.Background(), "wshub/work", "turn 1")
	if err != nil || !committed {
		t.Fatalf("expected the turn's work committed, got %v, %v", committed, err)
	}
	if got := testGit(t, co.Dir, "ls-tree", "--name-only", "HEAD", "work.txt"); got != "work.txt" {
		t.Errorf("expected work.txt in the commit, got %q", got)
	}
}
