package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An account's GitHub App from the operator's command line: the first setting needs
// the App's id and its webhook secret (from a file, never shown); --installation
// replaces the account's installations, and one another account has is refused.
func TestAdminAccountGitHubApp(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	other, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Other", "--entitled")
	id := acct["accountId"].(string)
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("whsec_app_1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs := wshub(t, env, 2, "admin", "account", "github-app", "--account", id, "--app-id", "12"); !strings.Contains(errs, "needs its id and its webhook secret") {
		t.Errorf("expected the first setting to need the secret, got %q", errs)
	}
	out, _ := wshub(t, env, 0, "admin", "account", "github-app", "--account", id, "--app-id", "12", "--webhook-secret-file", secretFile,
		"--installation", "77, 78,77")
	if out["appId"] != float64(12) || !slices.Equal(out["installations"].([]any), []any{float64(77), float64(78)}) || strings.Contains(fmt.Sprint(out), "whsec") {
		t.Errorf("expected App 12 with installations 77 and 78 and no secret shown, got %v", out)
	}
	out, _ = wshub(t, env, 0, "admin", "account", "github-app", "--account", id, "--installation", "78")
	if !slices.Equal(out["installations"].([]any), []any{float64(78)}) || out["appId"] != float64(12) {
		t.Errorf("expected the installations replaced and the App kept, got %v", out)
	}
	if _, errs := wshub(t, env, 2, "admin", "account", "github-app", "--account", other["accountId"].(string), "--app-id", "13",
		"--webhook-secret-file", secretFile, "--installation", "78"); !strings.Contains(errs, "installation 78 is another account's") {
		t.Errorf("expected another account's installation refused, got %q", errs)
	}
}
