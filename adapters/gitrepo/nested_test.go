package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An agent plants embedded repositories whose head the hub's git would resolve
// outside the checkout: a ref that is a symlink to another checkout's ref, a .git that
// is a symlink or a gitdir file pointing elsewhere, and a head naming a commit the
// repository does not hold. None is committed, each is named with its reason, the
// rest of the turn's work is committed, and a plain embedded repository still is.
func TestCommitLeavesOutEmbeddedRepositoriesThatReachOut(t *testing.T) {
	co, _ := hostileCheckout(t)
	other, _ := hostileCheckout(t)
	testGit(t, other.Dir, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "--quiet", "--allow-empty", "-m", "another account's work")
	secret := testGit(t, other.Dir, "rev-parse", "HEAD")
	mkdir := func(parts ...string) string {
		p := filepath.Join(append([]string{co.Dir}, parts...)...)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// x: refs/heads/y is a symlink to the other checkout's ref.
	writeFile(t, filepath.Join(mkdir("x", ".git", "refs", "heads"), "..", "..", "HEAD"), "ref: refs/heads/y\n")
	mkdir("x", ".git", "objects")
	if err := os.Symlink(filepath.Join(other.Dir, ".git", "refs", "heads", "wshub", "work"), filepath.Join(co.Dir, "x", ".git", "refs", "heads", "y")); err != nil {
		t.Fatal(err)
	}
	// l: .git itself is a symlink to the other checkout's.
	mkdir("l")
	if err := os.Symlink(filepath.Join(other.Dir, ".git"), filepath.Join(co.Dir, "l", ".git")); err != nil {
		t.Fatal(err)
	}
	// g: a gitdir file pointing at the other checkout.
	writeFile(t, filepath.Join(mkdir("g"), ".git"), "gitdir: "+filepath.Join(other.Dir, ".git")+"\n")
	// d: the other account's head, written as a detached HEAD it does not hold.
	writeFile(t, filepath.Join(mkdir("d", ".git", "objects"), "..", "HEAD"), secret+"\n")
	mkdir("d", ".git", "refs")
	// f: HEAD is a FIFO (reading it would wait for a writer forever).
	mkdir("f", ".git", "objects")
	if err := syscall.Mkfifo(filepath.Join(co.Dir, "f", ".git", "HEAD"), 0o644); err != nil {
		t.Fatal(err)
	}
	// p: a head whose object would be looked up in a pack index that is a FIFO.
	writeFile(t, filepath.Join(mkdir("p", ".git", "objects", "pack"), "..", "..", "HEAD"), secret+"\n")
	if err := syscall.Mkfifo(filepath.Join(co.Dir, "p", ".git", "objects", "pack", "pack-1.idx"), 0o644); err != nil {
		t.Fatal(err)
	}
	// ok: a real embedded repository.
	okRepo := mkdir("vendor", "ok")
	testGit(t, okRepo, "init", "--quiet")
	testGit(t, okRepo, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "--quiet", "--allow-empty", "-m", "dep")
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "the turn's work\n")

	committed, left, err := co.Commit(context.Background(), "wshub/work", "turn 1")
	if err != nil || !committed {
		t.Fatalf("expected the turn's work committed, got %v, %v", committed, err)
	}
	want := map[string]string{
		"x": "an embedded repository whose .git holds a symlink",
		"l": "an embedded repository whose .git is a symlink",
		"g": "an embedded repository whose .git points out of the checkout",
		"d": "an embedded repository whose head is not an object it holds",
		"f": "an embedded repository whose head cannot be read",
		"p": "an embedded repository whose head is not an object it holds",
	}
	got := map[string]string{}
	for _, l := range left {
		got[l.Path] = l.Reason
	}
	for path, reason := range want {
		if got[path] != reason {
			t.Errorf("expected %s left out as %q, got %q (all: %v)", path, reason, got[path], left)
		}
	}
	if len(got) != len(want) {
		t.Errorf("expected only %d paths left out, got %v", len(want), left)
	}
	tree := testGit(t, co.Dir, "ls-tree", "-r", "HEAD")
	if strings.Contains(tree, secret) {
		t.Fatalf("the commit records the other account's head:\n%s", tree)
	}
	for _, p := range []string{"x", "l", "g", "d", "f", "p"} {
		if strings.Contains(tree, "\t"+p) {
			t.Errorf("expected %s not in the commit, got:\n%s", p, tree)
		}
	}
	if !strings.Contains(tree, "160000 commit "+testGit(t, okRepo, "rev-parse", "HEAD")+"\tvendor/ok") {
		t.Errorf("expected the plain embedded repository committed as a gitlink, got:\n%s", tree)
	}
	if got := testGit(t, co.Dir, "show", "HEAD:work.txt"); got != "the turn's work" {
		t.Errorf("expected work.txt committed, got %q", got)
	}
}

// A file over the size limit is left out of the commit and named, unless .gitignore
// leaves it out anyway; the rest of the turn's work is committed.
func TestCommitLeavesOutFilesOverTheLimit(t *testing.T) {
	co, _ := hostileCheckout(t)
	co.MaxFileBytes = 1 << 20
	writeFile(t, filepath.Join(co.Dir, "big.bin"), strings.Repeat("x", 2<<20))
	if err := os.MkdirAll(filepath.Join(co.Dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(co.Dir, "build", "out.bin"), strings.Repeat("y", 2<<20))
	writeFile(t, filepath.Join(co.Dir, ".gitignore"), "/build/\n")
	writeFile(t, filepath.Join(co.Dir, "small.txt"), "small\n")
	committed, left, err := co.Commit(context.Background(), "wshub/work", "turn 1")
	if err != nil || !committed {
		t.Fatalf("expected the small file committed, got %v, %v", committed, err)
	}
	if len(left) != 1 || left[0].Path != "big.bin" || !strings.Contains(left[0].Reason, "larger than the 1 MiB") {
		t.Fatalf("expected big.bin named as too large, and nothing else, got %v", left)
	}
	tree := testGit(t, co.Dir, "ls-tree", "-r", "--name-only", "HEAD")
	if !strings.Contains(tree, "small.txt") || strings.Contains(tree, "big.bin") {
		t.Fatalf("expected small.txt and not big.bin in the commit, got:\n%s", tree)
	}
}

// What an interrupted git leaves (a crash's index.lock, temporary packs), or what an
// agent plants there, does not stop the next commit, and is gone after it.
func TestCommitIsNotStoppedByAStaleLockOrTemporaryPacks(t *testing.T) {
	co, _ := hostileCheckout(t)
	gitDir := filepath.Join(co.Dir, ".git")
	writeFile(t, filepath.Join(gitDir, "index.lock"), "")
	writeFile(t, filepath.Join(gitDir, "objects", "pack", "tmp_pack_abc123"), strings.Repeat("z", 1<<20))
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "work\n")
	if committed, _, err := co.Commit(context.Background(), "wshub/work", "turn 1"); err != nil || !committed {
		t.Fatalf("expected the work committed past the stale lock, got %v, %v", committed, err)
	}
	for _, p := range []string{"index.lock", "objects/pack/tmp_pack_abc123"} {
		if _, err := os.Stat(filepath.Join(gitDir, p)); err == nil {
			t.Errorf("expected %s removed", p)
		}
	}
}

// Over the workspace's disk quota (checkout and home together) nothing is committed,
// and the one thing left out says why; under it, the work is committed.
func TestCommitOverTheDiskQuotaCommitsNothing(t *testing.T) {
	co, _ := hostileCheckout(t)
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "cache.bin"), strings.Repeat("h", 3<<20))
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "work\n")
	head := testGit(t, co.Dir, "rev-parse", "HEAD")
	co.MaxBytes, co.Counted = 2<<20, []string{home}
	committed, left, err := co.Commit(context.Background(), "wshub/work", "turn 1")
	if err != nil || committed || len(left) != 1 || !strings.Contains(left[0].Reason, "disk quota") {
		t.Fatalf("expected nothing committed, the quota named, got %v, %v, %v", committed, left, err)
	}
	if got := testGit(t, co.Dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("expected the head to stay at %s, got %s", head, got)
	}
	co.MaxBytes = 64 << 20
	if committed, left, err := co.Commit(context.Background(), "wshub/work", "turn 2"); err != nil || !committed || len(left) != 0 {
		t.Fatalf("expected the work committed under the quota, got %v, %v, %v", committed, left, err)
	}
}
