package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
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
	if out["privateKey"] != false {
		t.Errorf("expected no private key yet, got %v", out)
	}
	// A GitHub project with no credential of its own, and a plain one.
	wshub(t, env, 0, "admin", "project", "add", "--account", id, "--repository", hubtest.GitRepo(t), "--forge", "github")
	wshub(t, env, 0, "admin", "project", "add", "--account", id, "--repository", hubtest.GitRepo(t))
	credentials := func() []string {
		t.Helper()
		_, text := wshub(t, env, 0, "admin", "project", "list", "--account", id)
		var list []struct{ Credential, Forge string }
		if err := json.Unmarshal([]byte(text), &list); err != nil {
			t.Fatalf("project list: %v\n%s", err, text)
		}
		var out []string
		for _, p := range list {
			out = append(out, p.Forge+":"+p.Credential)
		}
		slices.Sort(out)
		return out
	}
	if got := credentials(); !slices.Equal(got, []string{":", "github:"}) {
		t.Errorf("without the App's key, expected no credential shown, got %q", got)
	}

	// The App's private key, from a file: sealed, never shown, kept when not given.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errs := wshub(t, env, 2, "admin", "account", "github-app", "--account", id, "--private-key-file", secretFile); !strings.Contains(errs, "not a PEM RSA private key") {
		t.Errorf("expected a file that is no key refused, got %q", errs)
	}
	out, text := wshub(t, env, 0, "admin", "account", "github-app", "--account", id, "--private-key-file", keyFile)
	if out["privateKey"] != true || strings.Contains(text, "PRIVATE KEY") {
		t.Errorf("expected the key taken and not shown, got %s", text)
	}
	if out, _ = wshub(t, env, 0, "admin", "account", "github-app", "--account", id, "--installation", "78"); out["privateKey"] != true {
		t.Errorf("expected the key kept when not given, got %v", out)
	}
	if got := credentials(); !slices.Equal(got, []string{":", "github:account_github_app"}) {
		t.Errorf("with the App's key, expected the GitHub project to say it uses it, got %q", got)
	}
	// A content key rotation reseals the App's key with its secret.
	rotated := env.with("WSHUB_CONTENT_KEY=", "WSHUB_CONTENT_KEYS="+hubtest.NewContentKey(t)+","+env.get("WSHUB_CONTENT_KEY"))
	res, _ := wshub(t, rotated, 0, "admin", "reseal")
	resealed := map[string]any{}
	for _, k := range res["kinds"].([]any) {
		resealed[k.(map[string]any)["kind"].(string)] = k.(map[string]any)["resealed"]
	}
	if resealed["github_app_key"] != float64(1) || resealed["github_app_secret"] != float64(1) {
		t.Errorf("expected the App's key and secret resealed, got %v", resealed)
	}

	if _, errs := wshub(t, env, 2, "admin", "account", "github-app", "--account", other["accountId"].(string), "--app-id", "13",
		"--webhook-secret-file", secretFile, "--installation", "78"); !strings.Contains(errs, "installation 78 is another account's") {
		t.Errorf("expected another account's installation refused, got %q", errs)
	}
}
