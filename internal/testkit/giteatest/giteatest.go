// Package giteatest runs a real Gitea for tests: its REST API and git over smart HTTP,
// on a loopback port, on SQLite in a temporary directory, with an administrator and
// an access token made for the test.
//
// The binary comes from `bash scripts/gitea.sh`, which builds it from the Go module
// proxy into a per-user cache. Tests skip, saying so, when it is missing.
package giteatest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
	"github.com/wshub/wshub/internal/testkit/enginetest"
)

// Version is the Gitea release scripts/gitea.sh builds by default; its cache directory
// is searched first.
const Version = "v1.26.0"

// EnvBinary names a gitea binary; it overrides the cache and PATH.
const EnvBinary = "WSHUB_GITEA"

// startTimeout bounds the wait for Gitea to answer (it is ready in about a second; the
// margin is for a loaded machine running tests under -race).
const startTimeout = 60 * time.Second

// Server is a running Gitea, stopped by t.Cleanup.
type Server struct {
	// URL is Gitea's root, http://127.0.0.1:<port>, without a trailing slash.
	URL string
	// AdminUser is a site administrator, AdminToken its access token with every scope.
	AdminUser, AdminToken string
	// Client is an API client as AdminUser; a call that takes longer than a minute fails.
	Client *gitea.Client

	bin, dir, config, logPath string
}

// Start starts Gitea on a free loopback port with a fresh database, an administrator
// and its token, and waits until the API answers: about two seconds. It skips the test
// when gitea is not installed, and fails it when it is installed but does not work.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := built.Binary(t)
	started := time.Now()
	s := &Server{bin: bin, dir: t.TempDir(), AdminUser: "wshub-admin"}
	s.logPath = filepath.Join(s.dir, "gitea.log")
	s.config = filepath.Join(s.dir, "app.ini")
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		// The port is picked anew for each attempt: another process may take it between
		// FreePort and Gitea's bind.
		port := enginetest.FreePort(t)
		s.URL = "http://127.0.0.1:" + port
		if attempt == 1 {
			s.writeConfig(t, port)
			s.prepare(t)
		} else {
			s.setPort(t, port)
		}
		if err = s.start(t); err == nil {
			break
		}
		if !strings.Contains(enginetest.Tail(s.logPath), "address already in use") {
			t.Fatalf("giteatest: could not start gitea: %v\n%s", err, enginetest.Tail(s.logPath))
		}
		t.Logf("giteatest: gitea lost its port (attempt %d): %v", attempt, err)
	}
	if err != nil {
		t.Fatalf("giteatest: could not start gitea: %v\n%s", err, enginetest.Tail(s.logPath))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("giteatest: gitea's log:\n%s", enginetest.Tail(s.logPath))
		}
	})
	t.Logf("giteatest: gitea ready at %s in %v", s.URL, time.Since(started).Round(time.Millisecond))
	return s
}

// writeConfig writes app.ini: everything under s.dir, only what the API and git over
// HTTP need, nothing that reaches out (offline, no mailer, no update checks).
func (s *Server) writeConfig(t testing.TB, port string) {
	t.Helper()
	root := ""
	if os.Getuid() == 0 {
		// Gitea refuses to run as root unless told; the tests run as root in CI, and
		// this Gitea is theirs alone, on loopback, in a temporary directory.
		root = "I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true\n"
	}
	ini := fmt.Sprintf(`APP_NAME = wshub test
RUN_MODE = prod
WORK_PATH = %[1]s
%[3]s
[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]s
ROOT_URL = http://127.0.0.1:%[2]s/
DOMAIN = 127.0.0.1
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false
APP_DATA_PATH = %[1]s/data

[database]
DB_TYPE = sqlite3
PATH = %[1]s/data/gitea.db

[repository]
ROOT = %[1]s/repositories
DEFAULT_BRANCH = main

[repository.signing]
SIGNING_KEY = none

; Queues in memory, worked through in the background as in production; a push's
; updates (its branch in Gitea's tables) are done before git push returns, so a pull
; request can be opened from a branch just pushed. Not every queue immediate, as
; Gitea's own integration tests have them: some are pushed to while their pusher holds
; a lock or a transaction that their work then waits on (checking a pull request's
; mergeability during a merge, indexing issues while a repository is made private),
; which hangs.
[queue]
TYPE = channel

[queue.push_update]
TYPE = immediate

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[security]
INSTALL_LOCK = true
SECRET_KEY = %[4]s
; Cheap: the passwords of test users only.
PASSWORD_HASH_ALGO = pbkdf2$1000$32
; Tokens only in the Authorization header.
DISABLE_QUERY_AUTH_TOKEN = true

[service]
DISABLE_REGISTRATION = true
REQUIRE_SIGNIN_VIEW = false
DEFAULT_KEEP_EMAIL_PRIVATE = true
NO_REPLY_ADDRESS = noreply.example.org

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

; Webhooks go to the test's hub, on loopback, which Gitea refuses by default.
[webhook]
ALLOWED_HOST_LIST = loopback

[log]
MODE = console
LEVEL = Info
`, s.dir, port, root, enginetest.RandomHex(t, 16))
	if err := os.WriteFile(s.config, []byte(ini), 0o600); err != nil {
		t.Fatalf("giteatest: %v", err)
	}
}

// setPort changes the port in app.ini for another attempt. Gitea itself adds the
// secrets it generated at the file's end, so the rest is kept as it is.
func (s *Server) setPort(t testing.TB, port string) {
	t.Helper()
	b, err := os.ReadFile(s.config)
	if err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "HTTP_PORT ="):
			lines[i] = "HTTP_PORT = " + port
		case strings.HasPrefix(l, "ROOT_URL ="):
			lines[i] = "ROOT_URL = http://127.0.0.1:" + port + "/"
		}
	}
	if err := os.WriteFile(s.config, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatalf("giteatest: %v", err)
	}
}

// prepare makes the database and the administrator with Gitea's own commands, as an
// operator would, before the server runs.
func (s *Server) prepare(t testing.TB) {
	t.Helper()
	s.run(t, "migrate")
	out := s.run(t, "admin", "user", "create", "--admin", "--username", s.AdminUser,
		"--email", s.AdminUser+"@example.org", "--random-password", "--must-change-password=false",
		"--access-token", "--access-token-name", "giteatest", "--access-token-scopes", "all")
	// "Access token was successfully created... <40 hex>"
	const marker = "Access token was successfully created..."
	i := strings.Index(out, marker)
	if i < 0 {
		t.Fatalf("giteatest: gitea admin user create printed no token:\n%s", out)
	}
	s.AdminToken = strings.TrimSpace(strings.SplitN(out[i+len(marker):], "\n", 2)[0])
	if s.AdminToken == "" {
		t.Fatalf("giteatest: gitea admin user create printed an empty token:\n%s", out)
	}
}

// run runs a gitea command on s's configuration, to completion, and returns its
// output; a failure fails the test with that output.
func (s *Server) run(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, append(args, "--config", s.config, "--work-path", s.dir)...)
	cmd.Env = s.env()
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	enginetest.KillWithParent(cmd.SysProcAttr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("giteatest: gitea %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// env is the environment of Gitea's processes: nothing of the test's but PATH (for
// git), so no GITEA_* or GIT_* variable of the developer's changes what they do.
func (s *Server) env() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir}
}

// start runs `gitea web` and waits until its API answers, registering its stop.
func (s *Server) start(t testing.TB) error {
	t.Helper()
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	defer logFile.Close() // the child has its own copy
	cmd := exec.Command(s.bin, "web", "--config", s.config, "--work-path", s.dir)
	cmd.Env = s.env()
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	enginetest.KillWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Fatalf("giteatest: start %s: %v", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// Killed, not asked to stop: its graceful shutdown waits for open connections and
	// queues, and nothing it holds outlives the test's temporary directory.
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	if err := waitReady(s.URL, exited); err != nil {
		stop()
		return err
	}
	t.Cleanup(stop)
	s.Client, err = gitea.NewClient(s.URL, gitea.SetToken(s.AdminToken), gitea.SetGiteaVersion(""),
		gitea.SetHTTPClient(&http.Client{Timeout: startTimeout}))
	if err != nil {
		t.Fatalf("giteatest: %v", err)
	}
	return nil
}

// waitReady polls GET /api/v1/version until it answers 200, the process exits or
// startTimeout passes.
func waitReady(url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := client.Get(url + "/api/v1/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it was ready: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		}
	}
}

// built is where scripts/gitea.sh puts gitea.
var built = enginetest.Built{Pkg: "giteatest", Program: "gitea", Script: "scripts/gitea.sh", EnvBinary: EnvBinary,
	EnvCache: "WSHUB_GITEA_CACHE", CacheDir: "gitea", Version: Version}
