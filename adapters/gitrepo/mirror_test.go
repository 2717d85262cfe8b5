package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// testGit runs git for the test's own source repositories, isolated from the machine's
// configuration and with a fixed identity.
func testGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: expected success, got %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newSource makes a non-bare repository whose HEAD is branch, with commits commits.
func newSource(t *testing.T, branch string, commits int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	testGit(t, dir, "init", "--quiet", "--initial-branch="+branch)
	for range commits {
		commit(t, dir)
	}
	return dir
}

func commit(t *testing.T, dir string) string {
	t.Helper()
	testGit(t, dir, "commit", "--quiet", "--allow-empty", "--message=change")
	return testGit(t, dir, "rev-parse", "HEAD")
}

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
}

func TestMirrorDetectsDefaultBranch(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	tests := []struct {
		name       string
		branch     string
		commits    int
		wantBranch string
	}{
		{"trunk", "trunk", 2, "trunk"},
		{"main", "main", 1, "main"},
		{"nested name", "release/v1", 1, "release/v1"},
		{"empty repository", "trunk", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newSource(t, tt.branch, tt.commits)
			m := &Mirror{Dir: filepath.Join(t.TempDir(), "mirrors")}
			path, branch, err := m.Mirror(ctx, proj("prj_1", src))
			if err != nil {
				t.Fatalf("Mirror: expected no error, got %v", err)
			}
			if want := filepath.Join(m.Dir, "prj_1.git"); path != want {
				t.Errorf("path: expected %q, got %q", want, path)
			}
			if branch != tt.wantBranch {
				t.Errorf("default branch: expected %q, got %q", tt.wantBranch, branch)
			}
			if got := testGit(t, path, "rev-parse", "--is-bare-repository"); got != "true" {
				t.Errorf("is bare: expected %q, got %q", "true", got)
			}
			if tt.commits > 0 {
				want := testGit(t, src, "rev-parse", "HEAD")
				if got := testGit(t, path, "rev-parse", "refs/heads/"+tt.branch); got != want {
					t.Errorf("mirrored %s: expected %s, got %s", tt.branch, want, got)
				}
			}
			assertNoTemp(t, m.Dir)
		})
	}
}

func TestMirrorRefresh(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	src := newSource(t, "trunk", 1)
	testGit(t, src, "branch", "doomed")
	m := &Mirror{Dir: t.TempDir()}
	path, _, err := m.Mirror(ctx, proj("prj_1", src))
	if err != nil {
		t.Fatalf("first Mirror: expected no error, got %v", err)
	}

	head := commit(t, src)
	testGit(t, src, "branch", "--delete", "--force", "doomed")
	testGit(t, src, "branch", "feature")
	path2, branch, err := m.Mirror(ctx, proj("prj_1", src))
	if err != nil {
		t.Fatalf("refresh: expected no error, got %v", err)
	}
	if path2 != path || branch != "trunk" {
		t.Errorf("refresh result: expected (%q, %q), got (%q, %q)", path, "trunk", path2, branch)
	}
	if got := testGit(t, path, "rev-parse", "refs/heads/trunk"); got != head {
		t.Errorf("trunk after refresh: expected %s, got %s", head, got)
	}
	refs := testGit(t, path, "for-each-ref", "--format=%(refname)", "refs/heads")
	if want := "refs/heads/feature\nrefs/heads/trunk"; refs != want {
		t.Errorf("branches after refresh: expected %q, got %q", want, refs)
	}

	// The source's default branch moves: the refresh follows it.
	testGit(t, src, "checkout", "--quiet", "feature")
	if _, branch, err = m.Mirror(ctx, proj("prj_1", src)); err != nil || branch != "feature" {
		t.Errorf("after default branch change: expected (%q, nil), got (%q, %v)", "feature", branch, err)
	}
}

func TestMirrorEmptyThenFilled(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	src := newSource(t, "trunk", 0)
	m := &Mirror{Dir: t.TempDir()}
	if _, branch, err := m.Mirror(ctx, proj("prj_1", src)); err != nil || branch != "" {
		t.Fatalf("empty: expected (\"\", nil), got (%q, %v)", branch, err)
	}
	head := commit(t, src)
	path, branch, err := m.Mirror(ctx, proj("prj_1", src))
	if err != nil || branch != "trunk" {
		t.Fatalf("after first commit: expected (%q, nil), got (%q, %v)", "trunk", branch, err)
	}
	if got := testGit(t, path, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD: expected %s, got %s", head, got)
	}
}

func TestMirrorRelativePath(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	src := newSource(t, "trunk", 1)
	t.Chdir(filepath.Dir(src))
	m := &Mirror{Dir: t.TempDir()}
	path, _, err := m.Mirror(ctx, proj("prj_1", "src"))
	if err != nil {
		t.Fatalf("Mirror: expected no error, got %v", err)
	}
	if got := testGit(t, path, "config", "remote.origin.url"); got != src {
		t.Errorf("origin url: expected %q, got %q", src, got)
	}
	t.Chdir(t.TempDir())
	if _, branch, err := m.Mirror(ctx, proj("prj_1", src)); err != nil || branch != "trunk" {
		t.Errorf("refresh from elsewhere: expected (%q, nil), got (%q, %v)", "trunk", branch, err)
	}
}

func TestMirrorErrors(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	src := newSource(t, "trunk", 1)
	missing := filepath.Join(t.TempDir(), "no-such-repo")
	tests := []struct {
		name       string
		git        string
		projectID  string
		repository string
		wantInErr  string
	}{
		{"nonexistent path", "", "prj_1", missing, "git clone: repository '" + missing + "' does not exist"},
		{"not a repository", "", "prj_1", t.TempDir(), "is a directory, but not a git repository"},
		{"option-like repository", "", "prj_1", "--upload-pack=touch /tmp/x", "invalid repository"},
		{"empty repository", "", "prj_1", "", "no repository"},
		{"empty project id", "", "", src, "invalid project id"},
		{"traversal project id", "", "../prj_1", src, "invalid project id"},
		{"slash project id", "", "a/b", src, "invalid project id"},
		{"hidden project id", "", ".prj_1", src, "invalid project id"},
		{"git missing", filepath.Join(t.TempDir(), "git"), "prj_1", src, "git program was not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data", "mirrors")
			m := &Mirror{Dir: dir, Git: tt.git}
			path, branch, err := m.Mirror(ctx, proj(tt.projectID, tt.repository))
			if err == nil {
				t.Fatalf("Mirror: expected an error, got (%q, %q)", path, branch)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("error: expected it to contain %q, got %q", tt.wantInErr, err)
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("error: expected no mirror directory in it, got %q", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error: expected one line, got %q", err)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Errorf("mirror dir after failure: expected empty, got %d entries", len(entries))
			}
		})
	}
}

func TestMirrorCanceled(t *testing.T) {
	requireGit(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := &Mirror{Dir: t.TempDir()}
	_, _, err := m.Mirror(ctx, proj("prj_1", newSource(t, "trunk", 1)))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Mirror with canceled context: expected context.Canceled, got %v", err)
	}
	assertNoTemp(t, m.Dir)
}

func TestMirrorConcurrent(t *testing.T) {
	requireGit(t)
	ctx := context.Background()
	src := newSource(t, "trunk", 1)
	m := &Mirror{Dir: t.TempDir()}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if _, branch, err := m.Mirror(ctx, proj("prj_1", src)); err != nil || branch != "trunk" {
				t.Errorf("caller %d: expected (%q, nil), got (%q, %v)", i, "trunk", branch, err)
			}
		})
	}
	wg.Wait()
	assertNoTemp(t, m.Dir)
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read mirror dir: %v", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("mirror dir: expected no temporary clones, got %s", e.Name())
		}
	}
}
