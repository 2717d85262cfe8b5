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

// TestATurnsCommitRunsOneGitProcessWhenNothingChanged: the change check of a turn
// reads the index itself (no ls-files) and starts git for status only; a turn with
// work adds the add and the commit, and what status cannot vouch for (a change staged
// by the agent) goes the long way. The runtime's bundle of a turn that committed
// nothing reads the branch's ref without git.
func TestATurnsCommitRunsOneGitProcessWhenNothingChanged(t *testing.T) {
	co, _ := hostileCheckout(t)
	ctx := context.Background()
	var commands func() []string
	co.Git, commands = countingGit(t)

	if committed, err := co.CommitAll(ctx, "wshub/work", "nothing"); err != nil || committed {
		t.Fatalf("expected nothing committed, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"status"}; !slices.Equal(got, want) {
		t.Errorf("a turn with no change: expected git %q, got %q", want, got)
	}
	writeFile(t, filepath.Join(co.Dir, "work.txt"), "work\n")
	if committed, err := co.CommitAll(ctx, "wshub/work", "work"); err != nil || !committed {
		t.Fatalf("expected the work committed, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"status", "add", "commit"}; !slices.Equal(got, want) {
		t.Errorf("a turn with work: expected git %q, got %q", want, got)
	}
	// The agent staged the file's removal and left the file: the add puts it back,
	// and there is nothing to commit, which diff-index says.
	testGit(t, co.Dir, "rm", "--cached", "--quiet", "work.txt")
	if committed, err := co.CommitAll(ctx, "wshub/work", "restaged"); err != nil || committed {
		t.Fatalf("expected nothing committed, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"status", "add", "diff-index"}; !slices.Equal(got, want) {
		t.Errorf("a turn that staged a change: expected git %q, got %q", want, got)
	}

	// What setup wrote is kept out (and a cached path it names): status vouches for
	// that alone; a new directory holding a kept-out file is for add to sort out.
	if err := os.MkdirAll(filepath.Join(co.Dir, "setup-out"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(co.Dir, "setup-out", "deps.txt"), "deps\n")
	if err := co.KeepOut(ctx, "wshub/work", []string{"mixed/kept.txt"}); err != nil {
		t.Fatal(err)
	}
	commands()
	if committed, err := co.CommitAll(ctx, "wshub/work", "kept out"); err != nil || committed {
		t.Fatalf("expected nothing committed beside what is kept out, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"status"}; !slices.Equal(got, want) {
		t.Errorf("a turn with only kept-out files: expected git %q, got %q", want, got)
	}
	if err := os.MkdirAll(filepath.Join(co.Dir, "mixed"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(co.Dir, "mixed", "kept.txt"), "kept\n")
	writeFile(t, filepath.Join(co.Dir, "mixed", "new.txt"), "new\n")
	if committed, err := co.CommitAll(ctx, "wshub/work", "mixed"); err != nil || !committed {
		t.Fatalf("expected the new file committed, got %v, %v", committed, err)
	}
	if got, want := commands(), []string{"status", "add", "diff-index", "commit"}; !slices.Equal(got, want) {
		t.Errorf("a new file beside a kept-out one: expected git %q, got %q", want, got)
	}
	if files := testGit(t, co.Dir, "show", "--name-only", "--format=", "HEAD"); files != "mixed/new.txt" {
		t.Errorf("expected the commit to take mixed/new.txt alone, got %q", files)
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
