// Package forgetest holds what the forge fakes (forgetest/github, forgetest/gitlab)
// share: bare repositories served over git's smart HTTP protocol (git http-backend
// through net/http/cgi), as a forge serves them, with the fake deciding who may fetch
// and push. The repositories are real, so a fake can answer what the forge answers
// from them: whether a branch exists, and whether it has commits the base has not.
package forgetest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Repos are bare repositories under one directory, named by their forge path
// ("owner/name", "group/sub/name").
type Repos struct {
	root    string
	backend *cgi.Handler
}

// NewRepos makes an empty set of repositories, removed at the test's end.
func NewRepos(t testing.TB) *Repos {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("forgetest: git is not installed")
	}
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("forgetest: git --exec-path: %v", err)
	}
	root := t.TempDir()
	return &Repos{root: root, backend: &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env:  append(gitEnv(), "GIT_PROJECT_ROOT="+root, "GIT_HTTP_EXPORT_ALL=1"),
	}}
}

// gitEnv keeps the machine's and the user's git configuration out of the fake's git.
func gitEnv() []string {
	return []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Forge Fake", "GIT_AUTHOR_EMAIL=fake@forge.test",
		"GIT_COMMITTER_NAME=Forge Fake", "GIT_COMMITTER_EMAIL=fake@forge.test"}
}

// Dir is the bare repository of a path, for a test that looks inside.
func (r *Repos) Dir(path string) string {
	return filepath.Join(r.root, filepath.FromSlash(path)+".git")
}

// Create makes the bare repository of path with main holding one commit (a README),
// pushes allowed (the fake decides who may push before git sees the request).
func (r *Repos) Create(t testing.TB, path string) {
	t.Helper()
	dir := r.Dir(path)
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("forgetest: repository %s exists", path)
	}
	if out, err := r.run("", nil, "init", "--quiet", "--bare", "--initial-branch=main", dir); err != nil {
		t.Fatalf("forgetest: git init %s: %v: %s", path, err, out)
	}
	must := func(stdin []byte, args ...string) string {
		t.Helper()
		out, err := r.run(dir, stdin, args...)
		if err != nil {
			t.Fatalf("forgetest: git %s in %s: %v: %s", strings.Join(args, " "), path, err, out)
		}
		return out
	}
	must(nil, "config", "http.receivepack", "true")
	blob := must([]byte("# "+path+"\n"), "hash-object", "-w", "--stdin")
	tree := must([]byte("100644 blob "+blob+"\tREADME.md\n"), "mktree")
	commit := must(nil, "commit-tree", tree, "-m", "Initial commit")
	must(nil, "update-ref", "refs/heads/main", commit)
}

// Branch adds branch to the repository of path, off main and one commit ahead (a
// file named after the branch), as a push would, and returns the commit.
func (r *Repos) Branch(t testing.TB, path, branch string) string {
	t.Helper()
	dir := r.Dir(path)
	index := filepath.Join(t.TempDir(), "index")
	must := func(env []string, stdin []byte, args ...string) string {
		t.Helper()
		out, err := r.runEnv(dir, env, stdin, args...)
		if err != nil {
			t.Fatalf("forgetest: git %s in %s: %v: %s", strings.Join(args, " "), path, err, out)
		}
		return out
	}
	idx := []string{"GIT_INDEX_FILE=" + index}
	must(idx, nil, "read-tree", "main")
	blob := must(nil, []byte("work on "+branch+"\n"), "hash-object", "-w", "--stdin")
	must(idx, nil, "update-index", "--add", "--cacheinfo", "100644,"+blob+",changes/"+branch+".txt")
	tree := must(idx, nil, "write-tree")
	commit := must(nil, nil, "commit-tree", tree, "-p", "main", "-m", "Work on "+branch)
	must(nil, nil, "update-ref", "refs/heads/"+branch, commit)
	return commit
}

// Protect refuses every push that updates branch, with message on git's remote
// lines, as a forge's protected branch does.
func (r *Repos) Protect(t testing.TB, path, branch, message string) {
	t.Helper()
	hook := fmt.Sprintf("#!/bin/sh\nwhile read old new ref; do\n  if [ \"$ref\" = %s ]; then\n    echo %s >&2\n    exit 1\n  fi\ndone\nexit 0\n",
		shellQuote("refs/heads/"+branch), shellQuote(message))
	if err := os.WriteFile(filepath.Join(r.Dir(path), "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatalf("forgetest: %v", err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Head is the commit branch points at in the repository of path ("" when it has no
// such branch).
func (r *Repos) Head(path, branch string) string {
	out, err := r.run(r.Dir(path), nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return ""
	}
	return out
}

// Ahead counts the commits on head that base has not.
func (r *Repos) Ahead(path, base, head string) (int, error) {
	out, err := r.run(r.Dir(path), nil, "rev-list", "--count", "refs/heads/"+base+"..refs/heads/"+head)
	if err != nil {
		return 0, fmt.Errorf("git rev-list %s..%s: %v: %s", base, head, err, out)
	}
	return strconv.Atoi(out)
}

func (r *Repos) run(dir string, stdin []byte, args ...string) (string, error) {
	return r.runEnv(dir, nil, stdin, args...)
}

func (r *Repos) runEnv(dir string, env []string, stdin []byte, args ...string) (string, error) {
	if dir != "" {
		args = append([]string{"--git-dir", dir}, args...)
	}
	cmd := exec.Command("git", args...)
	cmd.Env = append(append(os.Environ(), gitEnv()...), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// GitRequest reads a request for git's smart HTTP protocol: the repository's path
// ("owner/name" of /owner/name.git/info/refs) and whether it pushes. ok is false for
// any other request.
func GitRequest(r *http.Request) (path string, push bool, ok bool) {
	i := strings.Index(r.URL.Path, ".git/")
	if i < 0 {
		return "", false, false
	}
	path = strings.Trim(r.URL.Path[:i], "/")
	rest := r.URL.Path[i+len(".git/"):]
	switch {
	case rest == "info/refs":
		push = r.URL.Query().Get("service") == "git-receive-pack"
	case rest == "git-upload-pack", rest == "HEAD":
	case rest == "git-receive-pack":
		push = true
	default:
		return "", false, false
	}
	if path == "" || strings.Contains(path, "..") {
		return "", false, false
	}
	return path, push, true
}

// Exists reports whether the repository of path is there.
func (r *Repos) Exists(path string) bool {
	fi, err := os.Stat(r.Dir(path))
	return err == nil && fi.IsDir()
}

// ServeGit answers a git request the fake has let through. The Authorization header
// is dropped first: git http-backend has no use for it, and a token must not sit in
// a child process's environment (HTTP_AUTHORIZATION) where a test looks for leaks.
func (r *Repos) ServeGit(w http.ResponseWriter, req *http.Request) {
	req = req.Clone(req.Context())
	req.Header.Del("Authorization")
	// CGI takes no chunked body, and git sends a large push chunked: read it first.
	if req.ContentLength < 0 || len(req.TransferEncoding) > 0 {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.TransferEncoding = nil
	}
	r.backend.ServeHTTP(w, req)
}

// Push clones cloneURL, commits a file on a new branch and pushes it, as the hub's
// git does: the token reaches git through a credential helper reading an environment
// variable, never in the URL or the arguments. It returns git's output and error.
func Push(t testing.TB, cloneURL, user, token, branch string) (string, error) {
	t.Helper()
	home := t.TempDir()
	work := filepath.Join(home, "work")
	helper := `!f() { test "$1" = get || exit 0; echo "username=$FORGETEST_USER"; echo "password=$FORGETEST_TOKEN"; }; f`
	git := func(dir string, args ...string) (string, error) {
		args = append([]string{"-c", "credential.helper=", "-c", "credential.helper=" + helper}, args...)
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), gitEnv()...)
		cmd.Env = append(cmd.Env, "HOME="+home, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=/bin/false",
			"FORGETEST_USER="+user, "FORGETEST_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := git(home, "clone", "--quiet", cloneURL, work); err != nil {
		return out, err
	}
	if err := os.WriteFile(filepath.Join(work, "pushed.txt"), []byte(branch+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"checkout", "--quiet", "-B", branch}, {"add", "pushed.txt"}, {"commit", "--quiet", "-m", "Push " + branch}} {
		if out, err := git(work, args...); err != nil {
			t.Fatalf("forgetest: git %s: %v: %s", args[0], err, out)
		}
	}
	return git(work, "push", "--quiet", "origin", branch)
}

// RecordingGit is a git program that appends its command line ("ARGS ...") and its
// environment (one "ENV NAME=value" line each) to log, then runs the real git: what
// every git process a test's code starts was given.
func RecordingGit(t testing.TB, log string) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	real := strings.TrimSpace(string(out)) + "/git"
	script := filepath.Join(t.TempDir(), "git")
	body := "#!/bin/sh\n{ printf 'ARGS %s\\n' \"$*\"; env | sed 's/^/ENV /'; } >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}
