package core

import (
	"math/rand"
	"os/exec"
	"testing"
)

// TestBranchNamesAsGitDecides checks that a branch name in api.md's characters is
// refused exactly when git check-ref-format --branch refuses it: the named cases, and
// random names over the characters the rules are about.
func TestBranchNamesAsGitDecides(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Parallel()
	names := []string{"HEAD", "head", "Head", "HEAD/x", "x/HEAD", "FETCH_HEAD", "-x", "a/b", "a..b", "a/.b",
		".a", "a.", "a/", "/a", "a//b", "a.lock", "a.lock/b", "a/b.lock", "a.locks", "a.b", "_", "-"}
	r := rand.New(rand.NewSource(1))
	const chars = "aHlock.-/_"
	for range 600 {
		b := make([]byte, 1+r.Intn(8))
		for j := range b {
			b[j] = chars[r.Intn(len(chars))]
		}
		names = append(names, string(b))
	}
	outside := t.TempDir() // no repository: "-" cannot mean the previous branch
	for _, n := range names {
		ours := validateRef("branch", n, false) == nil
		git := exec.Command("git", "check-ref-format", "--branch", n)
		git.Dir = outside
		theirs := git.Run() == nil
		if ours != theirs {
			t.Errorf("branch %q: hub accepts %v, git accepts %v", n, ours, theirs)
		}
	}
}
