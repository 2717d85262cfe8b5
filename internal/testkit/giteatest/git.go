package giteatest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// credentialHelper answers git's request for credentials from the environment, so the
// token is in neither a URL, a command line nor a file.
const credentialHelper = `!f() { test "$1" = get || exit 0; echo "username=$GITEATEST_USER"; echo "password=$GITEATEST_TOKEN"; }; f`

// Push clones the repository at cloneURL, commits a file on branch (made from main
// when it is not main) and pushes branch over HTTP as user with token. It returns
// git's output, and an error when git failed: a refused push is an answer for the
// test to read, not a failure of the helper.
func (s *Server) Push(t testing.TB, cloneURL, user, token, branch string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", append([]string{
			"-c", "credential.helper=", "-c", "credential.helper=" + credentialHelper,
			"-c", "user.name=giteatest", "-c", "user.email=giteatest@example.org",
			"-c", "init.defaultBranch=main",
		}, args...)...)
		cmd.Dir = dir
		// Nothing of the developer's git configuration, and no prompt.
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0",
			"GITEATEST_USER=" + user, "GITEATEST_TOKEN=" + token}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := git("clone", "--quiet", cloneURL, "work"); err != nil {
		return out, err
	}
	dir = filepath.Join(dir, "work")
	if branch != "main" {
		if out, err := git("checkout", "--quiet", "-b", branch); err != nil {
			t.Fatalf("giteatest: git checkout -b %s: %v\n%s", branch, err, out)
		}
	}
	name := strings.NewReplacer("/", "-").Replace(branch) + ".txt"
	if err := os.WriteFile(filepath.Join(dir, name), []byte("a change on "+branch+"\n"), 0o600); err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	if out, err := git("add", name); err != nil {
		t.Fatalf("giteatest: git add: %v\n%s", err, out)
	}
	if out, err := git("commit", "--quiet", "-m", "Change "+branch); err != nil {
		t.Fatalf("giteatest: git commit: %v\n%s", err, out)
	}
	return git("push", "origin", branch)
}
