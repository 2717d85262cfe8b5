package hubtest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// GitHTTP serves the bare repositories under root over git's smart HTTP protocol (git
// http-backend through net/http/cgi) on loopback, pushes allowed, and returns the base
// URL: a remote whose hooks run on its side, as a hosted repository's do.
func GitHTTP(t testing.TB, root string) string {
	t.Helper()
	srv := httptest.NewServer(gitBackend(t, root))
	t.Cleanup(srv.Close)
	return srv.URL
}

// gitBackend is git http-backend serving the bare repositories under root.
func gitBackend(t testing.TB, root string) *cgi.Handler {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	return &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}}
}

// HostedRepository is a bare repository served over HTTP, with main from a fresh repo;
// a pre-receive hook refusing every push is installed when refuse is set.
func HostedRepository(t testing.TB, refuse bool) string {
	t.Helper()
	root := t.TempDir()
	bare := bareRepository(t, root, "hosted.git")
	if refuse {
		hook := "#!/bin/sh\necho 'protected: pushes to this repository need review' >&2\nexit 1\n"
		if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return GitHTTP(t, root) + "/hosted.git"
}

// PrivateRepository is HostedRepository behind basic auth: every request must carry
// token as its password, or gets 401, as a private repository on a forge does. seen
// returns the passwords it was sent, in order, wrong ones included.
func PrivateRepository(t testing.TB, token string) (url string, seen func() []string) {
	t.Helper()
	root := t.TempDir()
	bareRepository(t, root, "private.git")
	backend := gitBackend(t, root)
	var mu sync.Mutex
	var passwords []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, password, ok := r.BasicAuth()
		if ok {
			mu.Lock()
			passwords = append(passwords, password)
			mu.Unlock()
		}
		if !ok || password != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/private.git", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(passwords)
	}
}

// bareRepository makes root/name, a bare repository taking pushes over HTTP, with main
// from a fresh repository.
func bareRepository(t testing.TB, root, name string) string {
	t.Helper()
	bare := filepath.Join(root, name)
	Git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	Git(t, bare, "config", "http.receivepack", "true")
	Git(t, GitRepo(t), "push", "-q", bare, "main")
	return bare
}
