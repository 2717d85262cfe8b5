package gitrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileCheckout is a workspace checkout made from a mirror, and a bare repository
// the project pushes to.
func hostileCheckout(t *testing.T) (co *Checkout, bare string) {
	t.Helper()
	requireGit(t)
	ctx := context.Background()
	src := newSource(t, "main", 1)
	m := &Mirror{Dir: filepath.Join(t.TempDir(), "mirrors")}
	mirror, _, err := m.Mirror(ctx, proj("prj_1", src))
	if err != nil {
		t.Fatal(err)
	}
	co = &Checkout{Dir: filepath.Join(t.TempDir(), "ws_1", "checkout")}
	if err := co.Create(ctx, mirror, "wshub/work", "main"); err != nil {
		t.Fatal(err)
	}
	bare = filepath.Join(t.TempDir(), "pushed.git")
	testGit(t, t.TempDir(), "init", "--quiet", "--bare", bare)
	return co, bare
}

// tripwire is a program that records that it ran by creating marker; it exits 0 and
// copies its input, so it works as a hook, an fsmonitor or a filter.
func tripwire(t *testing.T, dir, name string) (program, marker string) {
	t.Helper()
	marker = filepath.Join(dir, name+".ran")
	program = filepath.Join(dir, name)
	if err := os.WriteFile(program, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat 2>/dev/null\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, marker
}

// TestHubGitRunsNothingFromTheCheckout plants, as a turn could, every way a
// repository can make git run a program (fsmonitor, hooks in .git/hooks and in a
// core.hooksPath, clean, smudge and process filters selected by a committed
// .gitattributes, diff drivers selected by .git/info/attributes, an external diff, a
// pager, an include, an ssh command and an ext:: push URL), then runs the hub's
// commit, its description of the commit and the push. None runs; the commit and the
// push still happen.
func TestHubGitRunsNothingFromTheCheckout(t *testing.T) {
	co, bare := hostileCheckout(t)
	traps := t.TempDir()
	gitDir := filepath.Join(co.Dir, ".git")
	var markers []string
	trap := func(name string) string {
		p, m := tripwire(t, traps, name)
		markers = append(markers, m)
		return p
	}
	agentGit := func(args ...string) { testGit(t, co.Dir, args...) }

	agentGit("config", "core.fsmonitor", trap("fsmonitor"))
	hooks := filepath.Join(traps, "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction", "post-index-change"} {
		for prefix, dir := range map[string]string{"hooksPath-": hooks, ".git-hooks-": filepath.Join(gitDir, "hooks")} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(trap(prefix+h), filepath.Join(dir, h)); err != nil {
				t.Fatal(err)
			}
		}
	}
	agentGit("config", "core.hooksPath", hooks)
	agentGit("config", "filter.evil.clean", trap("clean-filter"))
	agentGit("config", "filter.evil.smudge", trap("smudge-filter"))
	agentGit("config", "filter.evil.required", "true")
	agentGit("config", "filter.proc.process", trap("process-filter"))
	agentGit("config", "filter.proc.required", "true")
	if err := os.WriteFile(filepath.Join(co.Dir, ".gitattributes"), []byte("*.txt filter=evil\n*.md filter=proc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gitDir, "info", "attributes"), []byte("* diff=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agentGit("config", "diff.evil.command", trap("diff-driver"))
	agentGit("config", "diff.evil.textconv", trap("textconv"))
	agentGit("config", "diff.external", trap("diff-external"))
	agentGit("config", "core.pager", trap("pager"))
	included := filepath.Join(traps, "included.gitconfig")
	if err := os.WriteFile(included, []byte("[core]\n\tfsmonitor = "+trap("included-fsmonitor")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agentGit("config", "include.path", included)
	agentGit("config", "core.sshCommand", trap("ssh-command"))
	agentGit("config", "remote.origin.pushurl", "ext::"+trap("ext-transport"))
	for _, f := range []string{"work.txt", "notes.md"} {
		if err := os.WriteFile(filepath.Join(co.Dir, f), []byte("the turn's work\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx := context.Background()
	committed, err := co.CommitAll(ctx, "wshub/work", "wshub: turn_1")
	if err != nil || !committed {
		t.Errorf("expected the turn's work committed, got %v, %v", committed, err)
	}
	if _, err := co.Head(ctx, "wshub/work"); err != nil {
		t.Errorf("expected the commit described, got %v", err)
	}
	if err := co.Push(ctx, bare, "wshub/work"); err != nil {
		t.Errorf("expected the push to succeed, got %v", err)
	}
	for _, m := range markers {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("the hub's git ran a program the checkout planted: %s", filepath.Base(m))
		}
	}
	if got := testGit(t, bare, "log", "-1", "--format=%s", "wshub/work"); got != "wshub: turn_1" {
		t.Errorf("expected the pushed branch to end in the turn's commit, got %q", got)
	}
	for _, f := range []string{"work.txt", "notes.md"} {
		if got := testGit(t, co.Dir, "cat-file", "blob", "HEAD:"+f); got != "the turn's work" {
			t.Errorf("expected %s committed unfiltered, got %q", f, got)
		}
	}
}

func TestHubGitRefusesARedirectedRepository(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, co *Checkout, elsewhere string)
	}{
		{".git is a gitfile naming another repository", func(t *testing.T, co *Checkout, elsewhere string) {
			gitDir := filepath.Join(co.Dir, ".git")
			if err := os.RemoveAll(gitDir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(gitDir, []byte("gitdir: "+filepath.Join(elsewhere, ".git")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{".git is a symlink to another repository", func(t *testing.T, co *Checkout, elsewhere string) {
			gitDir := filepath.Join(co.Dir, ".git")
			if err := os.RemoveAll(gitDir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(elsewhere, ".git"), gitDir); err != nil {
				t.Fatal(err)
			}
		}},
		{"an objects directory symlinked elsewhere", func(t *testing.T, co *Checkout, elsewhere string) {
			ab := filepath.Join(co.Dir, ".git", "objects", "ab")
			_ = os.RemoveAll(ab)
			if err := os.Symlink(filepath.Join(elsewhere, ".git", "objects"), ab); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			co, _ := hostileCheckout(t)
			elsewhere := newSource(t, "main", 1)
			before := testGit(t, elsewhere, "rev-parse", "HEAD")
			tt.plant(t, co, elsewhere)
			if err := os.WriteFile(filepath.Join(co.Dir, "work.txt"), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := co.CommitAll(context.Background(), "wshub/work", "wshub: turn_1")
			if !errors.Is(err, ErrUnsafeRepository) {
				t.Errorf("expected the commit refused as unsafe, got %v", err)
			}
			if after := testGit(t, elsewhere, "rev-parse", "HEAD"); after != before {
				t.Errorf("the other repository moved from %s to %s", before, after)
			}
		})
	}
}

// The files the hub puts back in .git are read before they are written (a turn that
// left them alone writes nothing), so what the agent left in their place must not
// hold the hub: a FIFO is replaced, not waited on, and a config linked to a file of
// the checkout is cut loose from it.
func TestHubGitPutsBackWhatTheAgentLeftInPlaceOfItsFiles(t *testing.T) {
	co, _ := hostileCheckout(t)
	gitDir := filepath.Join(co.Dir, ".git")
	if err := co.secure("wshub/work"); err != nil {
		t.Fatal(err)
	}
	hubConfig, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"HEAD", filepath.Join("info", "exclude")} {
		if err := os.Remove(filepath.Join(gitDir, f)); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(gitDir, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The config keeps the hub's content, linked to a file the agent can write.
	linked := filepath.Join(co.Dir, "notes.txt")
	if err := os.Remove(filepath.Join(gitDir, "config")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(linked, hubConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(linked, filepath.Join(gitDir, "config")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := co.CommitAll(context.Background(), "wshub/work", "wshub: turn_1")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the commit waited on a FIFO the agent left in .git")
	}
	for _, f := range []string{"config", "HEAD", filepath.Join("info", "exclude")} {
		fi, err := os.Lstat(filepath.Join(gitDir, f))
		if err != nil || !fi.Mode().IsRegular() || links(fi) != 1 {
			t.Errorf(".git/%s should be a plain file again: %v %v", f, fi, err)
		}
	}
	if got := testGit(t, co.Dir, "cat-file", "blob", "HEAD:notes.txt"); got != strings.TrimSpace(string(hubConfig)) {
		t.Errorf("notes.txt should be committed as the agent wrote it, got %q", got)
	}
}
