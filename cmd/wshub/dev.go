package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub"
)

// devState is what `wshub dev` creates once and reuses: it lives in the data directory,
// which is local and ignored by git.
type devState struct {
	AccountID  string `json:"accountId"`
	ProjectID  string `json:"projectId"`
	Key        string `json:"key"`
	ContentKey string `json:"contentKey"`
	// URL is where the hub listened last, for the client commands run in the clone.
	URL string `json:"url,omitempty"`
}

// dev sets up a development hub (content key, account, key, sample project) once,
// prints how to call it, then serves. Meant for `make run`, never for production.
func dev(ctx context.Context, env environ, log *slog.Logger, stdout io.Writer) error {
	cfg, err := hub.LoadConfigFrom(env.list())
	if err != nil {
		return err
	}
	if err := checkProviderOS(goruntime.GOOS, cfg.Providers); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	statePath := filepath.Join(cfg.DataDir, "dev.json")
	var st devState
	if b, err := os.ReadFile(statePath); err == nil {
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("read %s: %w", statePath, err)
		}
	}
	if st.ContentKey == "" {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return err
		}
		st.ContentKey = base64.StdEncoding.EncodeToString(k)
	}
	if cfg.ContentKey == "" {
		cfg.ContentKey = st.ContentKey
	}
	// The development hub holds a printed key and runs agents: reachable from this
	// machine only, unless WSHUB_ADDR says otherwise.
	if _, set := env.lookup("WSHUB_ADDR"); !set {
		cfg.Addr = "127.0.0.1:8080"
	}
	// The app over plain http, on this machine only.
	if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
			cfg.AppInsecure = true
		}
	}
	// Any Linux desktop: without a cgroup for turns, run them unlimited and say so,
	// unless limits were asked for by name.
	if _, set := env.lookup("WSHUB_AGENT_LIMITS"); !set {
		cfg.AgentLimitsOptional = true
	}
	if cfg.PublicURL == "" {
		cfg.PublicURL = devBase(cfg)
	}
	if !cfg.WebhookAllowInsecure && env.get("WSHUB_WEBHOOK_ALLOW_INSECURE") == "" {
		cfg.WebhookAllowInsecure = true // development: let webhooks reach a local receiver
	}

	agentLines := devAgents(&cfg, env)

	h, err := hub.Open(ctx, cfg, log, hub.Options{})
	if err != nil {
		return err
	}
	if err := postgres.Migrate(ctx, h.Store.DB().DB); err != nil {
		h.Close()
		return err
	}
	created, note, err := ensureDevAccount(ctx, h, cfg, &st)
	st.URL = devBase(cfg)
	if err == nil {
		err = writeDevState(statePath, st)
	}
	var link string
	if err == nil {
		link, err = devSignInLink(ctx, h, st)
	}
	h.Close()
	if err != nil {
		return err
	}
	if note != "" {
		fmt.Fprintf(stdout, "\n%s\n", note)
	}
	printDevBanner(stdout, cfg, st, created, link, agentLines)
	cfg.MigrateOnStart = false
	return serveConfig(ctx, cfg, log)
}

// ensureDevAccount creates the account, key and sample project unless the stored ones
// still exist (the database may have been reset under an old dev.json). A key revoked
// (in the app, say) is replaced by a new key of the same account, and note says so.
func ensureDevAccount(ctx context.Context, h *hub.Hub, cfg hub.Config, st *devState) (created bool, note string, err error) {
	if st.AccountID != "" && st.Key != "" {
		if _, err := h.Service.Workspaces.Authenticate(ctx, "Bearer "+st.Key); err == nil {
			return false, "", nil
		}
		if _, err := h.Service.Admin.ListAPIKeys(ctx, st.AccountID); err == nil {
			_, key, err := h.Service.Admin.CreateAPIKey(ctx, st.AccountID, "development")
			if err != nil {
				return false, "", err
			}
			st.Key = key
			return false, "The development key was revoked: this is a new key of the same account.", nil
		}
	}
	// Not metered: the development account never needs a billing period.
	acct := &core.Account{Name: "Development", Entitled: true, Metered: false}
	if err := h.Service.Admin.CreateAccount(ctx, acct); err != nil {
		return false, "", err
	}
	_, key, err := h.Service.Admin.CreateAPIKey(ctx, acct.ID, "development")
	if err != nil {
		return false, "", err
	}
	repo, err := sampleRepository(ctx, filepath.Join(cfg.DataDir, "sample-repo"), cfg.Environ)
	if err != nil {
		return false, "", fmt.Errorf("sample repository: %w", err)
	}
	p, err := h.Service.Admin.AddProject(ctx, core.AddProjectInput{AccountID: acct.ID, Repository: repo, Name: "sample"})
	if err != nil {
		return false, "", err
	}
	if err := h.Service.Admin.PrepareProject(ctx, p); err != nil {
		return false, "", err
	}
	if p.State != core.ProjectReady {
		return false, "", fmt.Errorf("sample project is %s: %s", p.State, p.FailureReason)
	}
	st.AccountID, st.Key, st.ProjectID = acct.ID, key, p.ID
	return true, "", nil
}

// sampleRepository makes a small git repository to connect as the first project,
// running git with environ, the command's (nil: the process's).
func sampleRepository(ctx context.Context, dir string, environ []string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
		return abs, nil
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", err
	}
	readme := "# Sample project\n\nA repository created by `wshub dev` so the hub has a project to start workspaces from.\n"
	if err := os.WriteFile(filepath.Join(abs, "README.md"), []byte(readme), 0o644); err != nil {
		return "", err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "README.md"},
		{"-c", "user.name=wshub dev", "-c", "user.email=dev@wshub.invalid", "commit", "-q", "-m", "Initial commit"},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir, cmd.Env = abs, environ
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
	}
	return abs, nil
}

func writeDevState(path string, st devState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// devOwner is the development account's owner, who signs in to the app with the
// printed link.
const devOwner = "owner@dev.localhost"

// devSignInLink makes the development account's owner (once) and a fresh one-time
// sign-in link for them.
func devSignInLink(ctx context.Context, h *hub.Hub, st devState) (string, error) {
	id, err := core.NewIdentity(core.IdentityEmail, devOwner)
	if err != nil {
		return "", err
	}
	if _, err := h.Service.Admin.AddMember(ctx, st.AccountID, id, core.RoleOwner, "Developer"); err != nil {
		return "", err
	}
	link, err := h.Service.Admin.SignInLink(ctx, st.AccountID, id)
	if err != nil {
		return "", err
	}
	return signInURL(devBase(h.Config), link.Token), nil
}

// signInURL is the app's address that uses a one-time sign-in link's token.
func signInURL(base, token string) string {
	return strings.TrimRight(base, "/") + "/app/signin/link?token=" + token
}

func devBase(cfg hub.Config) string {
	if strings.HasPrefix(cfg.Addr, ":") {
		return "http://localhost" + cfg.Addr
	}
	return "http://" + cfg.Addr
}

func printDevBanner(w io.Writer, cfg hub.Config, st devState, created bool, link string, agentLines []string) {
	what := "Development account ready"
	if created {
		what = "Created a development account, API key and sample project"
	}
	fmt.Fprintf(w, `
%[1]s (kept in %[2]s/dev.json).

  account   %[3]s
  project   %[4]s
  API key   %[5]s

Agents:

  %[6]s

Listening on %[7]s (set WSHUB_ADDR=:8080 to listen on every interface).

Try it (the wshub client commands, run in this directory, find this hub by themselves):

  export WSHUB_URL=%[8]s WSHUB_API_KEY=%[5]s
  curl -s -H "Authorization: Bearer $WSHUB_API_KEY" $WSHUB_URL/v1/api/projects
  bin/wshub ws create --prompt "Add a CONTRIBUTING.md" --agent agent_1 --model demo --wait

The app, signed in as the account's owner (%[9]s): this link works once, within 15
minutes, from this machine only; make run prints a new one each time.

  %[10]s

`, what, cfg.DataDir, st.AccountID, st.ProjectID, st.Key, strings.Join(agentLines, "\n  "), cfg.Addr, devBase(cfg), devOwner, link)
}
