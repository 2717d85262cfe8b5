package gitrepo

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// lsFilesGitlinks is what git ls-files --stage says the gitlinks of dir's index are.
func lsFilesGitlinks(t *testing.T, dir string) []string {
	t.Helper()
	var links []string
	for l := range strings.Lines(testGit(t, dir, "ls-files", "--stage")) {
		if meta, path, ok := strings.Cut(strings.TrimSpace(l), "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			links = append(links, path)
		}
	}
	return links
}

// TestIndexGitlinksReadsWhatGitReads: the hub's own reading of the index finds the
// gitlinks git ls-files finds, in every index version and both hashes, and gives up
// (so git is asked) on a split index, a sparse one, a damaged one and an unverified one.
func TestIndexGitlinksReadsWhatGitReads(t *testing.T) {
	requireGit(t)
	for _, tc := range []struct {
		name    string
		init    []string
		version string
	}{
		{"v2", nil, "2"},
		{"v3 intent-to-add", nil, "3"},
		{"v4", nil, "4"},
		{"sha256 v4", []string{"--object-format=sha256"}, "4"},
		{"sha256 v2", []string{"--object-format=sha256"}, "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "repo")
			testGit(t, t.TempDir(), append([]string{"init", "--quiet", dir}, tc.init...)...)
			// Names that share prefixes (version 4 strips them), one long enough to need
			// the 0xfff length, and gitlinks among files.
			for _, f := range []string{"a.txt", "dir/a.txt", "dir/ab.txt", "dir/sub/z"} {
				path := filepath.Join(dir, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, path, f+"\n")
			}
			for _, link := range []string{"dir/lib", "vendor/one", "vendor/two"} {
				sub := filepath.Join(dir, filepath.FromSlash(link))
				testGit(t, t.TempDir(), append([]string{"init", "--quiet", sub}, tc.init...)...)
				writeFile(t, filepath.Join(sub, "f"), "f\n")
				testGit(t, sub, "add", "-A")
				testGit(t, sub, "commit", "--quiet", "-m", "one")
			}
			testGit(t, dir, "add", "-A")
			// A path over 4095 bytes, too long for the file system, straight into the index.
			long := strings.Repeat(strings.Repeat("l", 200)+"/", 21) + "f"
			blob := testGit(t, dir, "hash-object", "-w", "a.txt")
			testGit(t, dir, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
			if tc.name == "v3 intent-to-add" {
				writeFile(t, filepath.Join(dir, "new.txt"), "new\n")
				testGit(t, dir, "add", "--intent-to-add", "new.txt") // an extended flag
			}
			testGit(t, dir, "update-index", "--index-version", tc.version)
			index := filepath.Join(dir, ".git", "index")
			want := lsFilesGitlinks(t, dir)
			if len(want) != 3 {
				t.Fatalf("expected git to list 3 gitlinks, got %q", want)
			}
			got, ok := indexGitlinks(index)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("expected %q, got %q (read: %v)", want, got, ok)
			}

			b, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			damaged := slices.Clone(b)
			damaged[len(damaged)/2] ^= 1
			if err := os.WriteFile(index, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			if got, ok := indexGitlinks(index); ok {
				t.Errorf("expected a damaged index left to git, got %q", got)
			}
			if err := os.WriteFile(index, b[:len(b)-1], 0o644); err != nil {
				t.Fatal(err)
			}
			if got, ok := indexGitlinks(index); ok {
				t.Errorf("expected a cut index left to git, got %q", got)
			}
		})
	}

	t.Run("split index", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "repo")
		testGit(t, t.TempDir(), "init", "--quiet", dir)
		sub := filepath.Join(dir, "lib")
		testGit(t, t.TempDir(), "init", "--quiet", sub)
		writeFile(t, filepath.Join(sub, "f"), "f\n")
		testGit(t, sub, "add", "-A")
		testGit(t, sub, "commit", "--quiet", "-m", "one")
		testGit(t, dir, "add", "-A")
		testGit(t, dir, "update-index", "--split-index")
		if got, ok := indexGitlinks(filepath.Join(dir, ".git", "index")); ok {
			t.Errorf("expected a split index left to git, got %q", got)
		}
	})

	t.Run("not a file", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(fifo, filepath.Join(dir, "link")); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"fifo", "link"} {
			if got, ok := indexGitlinks(filepath.Join(dir, name)); ok {
				t.Errorf("expected a %s left to git, got %q", name, got)
			}
		}
	})

	t.Run("no index", func(t *testing.T) {
		if got, ok := indexGitlinks(filepath.Join(t.TempDir(), "index")); !ok || got != nil {
			t.Errorf("expected no gitlinks, got %q (read: %v)", got, ok)
		}
	})
}
