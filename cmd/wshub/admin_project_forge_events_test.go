package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ghfake "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// A project's forge events from the operator's command line: the first setting needs
// the webhook's secret, read from a file and never shown; the handle is the project's
// own or @wshub; the trigger label is the project's own or none; a project on no
// forge is refused in words; off drops them.
func TestAdminProjectForgeEvents(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	id := acct["accountId"].(string)
	const token, secret = "tok_forgeEvents_1", "whsec_fromAFile_77"
	gh := ghfake.Start(t)
	url := gh.NewRepo(t, "acme", "app")
	gh.Grant(token, "acme", "app", ghfake.Write)
	dir := t.TempDir()
	tokenFile, secretFile := filepath.Join(dir, "token"), filepath.Join(dir, "secret")
	for f, v := range map[string]string{tokenFile: token, secretFile: secret + "\n"} {
		if err := os.WriteFile(f, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	added, _ := wshub(t, env, 0, "admin", "project", "add", "--account", id, "--repository", url, "--token-file", tokenFile)
	pid := added["projectId"].(string)
	if _, out := wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--forge-webhook-secret-file", secretFile); !strings.Contains(out, "forge events need the project's forge") {
		t.Fatalf("expected a project on no forge refused, got %q", out)
	}
	if _, out := wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--forge", "github", "--forge-handle", "@bot"); !strings.Contains(out, "need the webhook's secret") {
		t.Fatalf("expected the first setting to need the secret, got %q", out)
	}
	upd, out := wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--forge-webhook-secret-file", secretFile)
	if upd["forgeHandle"] != "@wshub" || upd["forge"] != "github" || strings.Contains(out, secret) {
		t.Fatalf("expected the default handle and no secret shown, got %q", out)
	}
	if upd, _ = wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--forge-handle", "@bot"); upd["forgeHandle"] != "@bot" {
		t.Fatalf("expected the handle set alone, the secret kept, got %v", upd)
	}
	if _, out = wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--forge-handle", "@two words"); !strings.Contains(out, "one word") {
		t.Fatalf("expected a handle of two words refused, got %q", out)
	}
	// The trigger label is set alone, the handle kept; "" sets none.
	if upd, _ = wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--trigger-label", "good first fix"); upd["triggerLabel"] != "good first fix" || upd["forgeHandle"] != "@bot" {
		t.Fatalf("expected the trigger label set and the handle kept, got %v", upd)
	}
	if _, out = wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--trigger-label", "two\nlines"); !strings.Contains(out, "one line") {
		t.Fatalf("expected a label of two lines refused, got %q", out)
	}
	if upd, _ = wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--trigger-label", ""); upd["triggerLabel"] != nil {
		t.Fatalf("expected no trigger label, got %v", upd)
	}
	// Fixing failed checks is off until set; set alone, the handle kept; bounded.
	if upd["fixChecks"] != nil {
		t.Fatalf("expected failed checks off by default, got %v", upd)
	}
	if upd, _ = wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--fix-checks", "2"); upd["fixChecks"] != float64(2) || upd["forgeHandle"] != "@bot" {
		t.Fatalf("expected two fixes of failed checks and the handle kept, got %v", upd)
	}
	if _, out = wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--fix-checks", "-1"); !strings.Contains(out, "0 (off)") {
		t.Fatalf("expected a negative --fix-checks refused, got %q", out)
	}
	// Off drops the secret: the handle alone cannot turn them on again.
	if upd, _ = wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--forge-events", "off"); upd["forgeHandle"] != nil {
		t.Fatalf("expected no handle once off, got %v", upd)
	}
	if _, out = wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--forge-handle", "@bot"); !strings.Contains(out, "need the webhook's secret") {
		t.Fatalf("expected events off to need the secret again, got %q", out)
	}
}
