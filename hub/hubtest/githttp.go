package hubtest

import (
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GitHTTP serves the bare repositories under root over git's smart HTTP protocol (git
// http-backend through net/http/cgi) on loopback, pushes allowed, and returns the base
// URL: a remote whose hooks run on its side, as a hosted repository's do.
func GitHTTP(t testing.TB, root string) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}}
	srv := httptest.NewServer(backend)
	t.Cleanup(srv.Close)
	return srv.URL
}

// HostedRepository is a bare repository served over HTTP, with main from a fresh repo;
// a pre-receive hook refusing every push is installed when refuse is set.
func HostedRepository(t testing.TB, refuse bool) string {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "hosted.git")
	Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	Git(t, bare, "config", "http.receivepack", "true")
	Git(t, GitRepo(t), "push", "-q", bare, "main")
	if refuse {
		hook := "#!/bin/sh\necho 'protected: pushes to this repository need review' >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return GitHTTP(t, root) + "/hosted.git"
}
