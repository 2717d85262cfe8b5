package hubtest

import (
	"net/http/cgi"
	"net/http/httptest"
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
