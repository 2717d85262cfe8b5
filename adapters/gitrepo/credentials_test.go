package gitrepo

import (
	"context"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// privateRemote serves a repository over git's smart HTTP protocol (git http-backend
// behind net/http/cgi) on loopback, answering 401 to requests without the token as
// password: a private repository as GitHub or GitLab serve them. It returns the URL
// and the bare repository behind it.
func privateRemote(t *testing.T, token string) (string, string) {
	t.Helper()
	requireGit(t)
	execPath := testGit(t, t.TempDir(), "--exec-path")
	root := t.TempDir()
	bare := filepath.Join(root, "private.git")
	testGit(t, root, "init", "--quiet", "--bare", "--initial-branch=main", bare)
	testGit(t, bare, "config", "http.receivepack", "true")
	src := newSource(t, "main", 2)
	testGit(t, src, "push", "--quiet", bare, "main")
	backend := &cgi.Handler{Path: filepath.Join(execPath, "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, password, ok := r.BasicAuth(); !ok || password != token {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/private.git", bare
}

func TestPrivateRepositoryWithTheHubsToken(t *testing.T) {
	const token = "ghp_secretToken123"
	url, bare := privateRemote(t, token)
	ctx := context.Background()

	// Without credentials git cannot prompt (nobody is there): the add fails, saying why.
	_, _, err := (&Mirror{Dir: t.TempDir()}).Mirror(ctx, proj("prj_1", url))
	if err == nil || !strings.Contains(err.Error(), "Authentication failed") && !strings.Contains(err.Error(), "could not read Username") {
		t.Fatalf("expected the mirror refused for want of credentials, got %v", err)
	}

	creds := &Credentials{HTTPSToken: token}
	m := &Mirror{Dir: t.TempDir(), Auth: &ProjectCredentials{Fallback: creds}}
	path, branch, err := m.Mirror(ctx, proj("prj_1", url))
	if err != nil || branch != "main" {
		t.Fatalf("expected the private repository mirrored with the token, got %q, %v", branch, err)
	}
	if cfg, _ := os.ReadFile(filepath.Join(path, "config")); strings.Contains(string(cfg), token) {
		t.Fatalf("the token was written into the mirror's config:\n%s", cfg)
	}

	// A workspace branch is pushed back with the same token.
	co := &Checkout{Dir: filepath.Join(t.TempDir(), "ws", "checkout"), Credentials: creds}
	if err := co.Create(ctx, path, "wshub/private", "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(co.Dir, "work.txt"), []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := co.CommitAll(ctx, "wshub/private", "wshub: turn_1"); !ok || err != nil {
		t.Fatalf("expected a commit, got %v, %v", ok, err)
	}
	if err := co.Push(ctx, url, "wshub/private"); err != nil {
		t.Fatalf("expected the push to the private repository to succeed with the token, got %v", err)
	}
	if got := testGit(t, bare, "log", "-1", "--format=%s", "wshub/private"); got != "wshub: turn_1" {
		t.Fatalf("expected the branch pushed, got %q", got)
	}

	// A wrong token fails, and the reason does not show it.
	wrong := &Mirror{Dir: t.TempDir(), Auth: &ProjectCredentials{Fallback: &Credentials{HTTPSToken: "ghp_wrongToken456"}}}
	if _, _, err := wrong.Mirror(ctx, proj("prj_1", url)); err == nil || strings.Contains(err.Error(), "ghp_wrong") {
		t.Fatalf("expected a wrong token refused without being shown, got %v", err)
	}
}
