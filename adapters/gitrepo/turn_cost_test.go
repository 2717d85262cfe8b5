package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// countingGit is a git that logs the command (its first argument after the hub's
// configuration) of each run to a file, then runs the real git.
func countingGit(t *testing.T) (program string, commands func() []string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	program = filepath.Join(dir, "git")
	script := "#!/bin/sh\nfor a; do case \"$a\" in -c|-C) skip=1 ;; *) if [ -z \"$skip\" ]; then echo \"$a\" >> '" + log + "'; break; fi; skip= ;; esac; done\nexec git \"$@\"\n"
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, func() []string {
		b, _ := os.ReadFile(log)
		_ = os.Remove(log)
		return strings.Fields(string(b))
	}
}

// TestATurnsCommitRunsTwoGitProcessesWhenNothingChanged: the change check of a turn
// reads the index itself (no ls-files) and starts git for add and diff-index only;
// a turn with work adds the commit. The runtime's bundle of a turn that committed
// nothing reads the branch's ref without git.
func TestATurnsCommitRunsTwoGitProcessesWhenNothingChanged(t *testing.T) {
	co, _ := hostileCheckout(t)
	ctx := context.Background()
	var commands func() []string
	co.Git, commands = countingGit(t)

	if committed, err := co.CommitAll(ctx, "wshub/work", "nothing"); err != nil || committed {
		t.Fatalf("expected nothing committed, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"add", "diff-index"}; !slices.Equal(got, want) {
		t.Errorf("a turn with no change: expected git %q, got %q", want, got)
	}
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "work\n")
	if committed, err := co.CommitAll(ctx, "wshub/work", "work"); err != nil || !committed {
		t.Fatalf("expected the work committed, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"add", "diff-index", "commit"}; !slices.Equal(got, want) {
		t.Errorf("a turn with work: expected git %q, got %q", want, got)
	}

	head := testGit(t, co.Dir, "rev-parse", "HEAD")
	bundle := filepath.Join(t.TempDir(), "up.bundle")
	for _, packed := range []bool{false, true} {
		if packed {
			testGit(t, co.Dir, "pack-refs", "--all")
		}
		if made, err := co.BundleSince(ctx, "wshub/work", head, bundle); err != nil || made {
			t.Fatalf("expected no bundle at the hub's head (packed refs: %v), got %v, %v", packed, made, err)
		}
		if got := commands(); len(got) != 0 {
			t.Errorf("the bundle of a turn that committed nothing (packed refs: %v): expected no git, got %q", packed, got)
		}
	}
	base := testGit(t, co.Dir, "rev-parse", "HEAD~1")
	if made, err := co.BundleSince(ctx, "wshub/work", base, bundle); err != nil || !made {
		t.Fatalf("expected a bundle of the turn's commit, got %v, %v", made, err)
	}
	if got, want := commands(), []string{"rev-parse", "bundle"}; !slices.Equal(got, want) {
		t.Errorf("the bundle of a turn's commit: expected git %q, got %q", want, got)
	}
}
