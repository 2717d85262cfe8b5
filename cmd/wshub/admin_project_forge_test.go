package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// The project's own credential from the operator's command line: a token from a file
// mirrors a private repository; the list shows its kind and never the token; one kind
// at a time; a key that is no key is refused without being echoed; --no-credential
// goes back to the hub-wide one (none here: the fetch is refused).
func TestAdminProjectCredentialsFromFiles(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	id := acct["accountId"].(string)
	const token = "tok_fromAFile_4242"
	url, _ := hubtest.PrivateRepository(t, token)
	dir := t.TempDir()
	tokenFile, keyFile := filepath.Join(dir, "token"), filepath.Join(dir, "key")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte("not a key "+token), 0o600); err != nil {
		t.Fatal(err)
	}

	added, out := wshub(t, env, 0, "admin", "project", "add", "--account", id, "--repository", url, "--push",
		"--forge", "github", "--pull-requests", "draft", "--token-file", tokenFile)
	if added["state"] != "ready" || strings.Contains(out, token) {
		t.Fatalf("expected the private repository mirrored with the file's token, got %v %q", added, out)
	}
	pid := added["projectId"].(string)
	_, out = wshub(t, env, 0, "admin", "project", "list", "--account", id)
	if strings.Contains(out, token) || !strings.Contains(out, `"credential": "token"`) ||
		!strings.Contains(out, `"forge": "github"`) || !strings.Contains(out, `"pullRequests": "draft"`) {
		t.Fatalf("expected the list to show the kind, forge and setting, never the token:\n%s", out)
	}
	if _, out = wshub(t, env, 1, "admin", "project", "update", "--project", pid, "--token-file", tokenFile, "--ssh-key-file", keyFile); !strings.Contains(out, "give one credential") {
		t.Fatalf("expected one credential at a time, got %q", out)
	}
	if _, out = wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--ssh-key-file", keyFile); !strings.Contains(out, "not a private key") || strings.Contains(out, token) {
		t.Fatalf("expected the key refused without being echoed, got %q", out)
	}
	// A deploy key cannot call a forge's API: refused while pull requests are on.
	sshKey := filepath.Join(dir, "deploy_key")
	if err := os.WriteFile(sshKey, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, out = wshub(t, env, 2, "admin", "project", "update", "--project", pid, "--ssh-key-file", sshKey); !strings.Contains(out, "pull requests need a token or a GitHub App") {
		t.Fatalf("expected a deploy key refused while pull requests are on, got %q", out)
	}
	wshub(t, env, 0, "admin", "project", "update", "--project", pid, "--no-credential")
	if _, out = wshub(t, env, 1, "admin", "project", "refresh", "--project", pid); !strings.Contains(out, "could not be fetched") {
		t.Fatalf("expected the fetch refused without the project's token, got %q", out)
	}
	_, out = wshub(t, env, 0, "admin", "project", "list", "--account", id)
	if !strings.Contains(out, `"credential": ""`) {
		t.Fatalf("expected no credential listed, got:\n%s", out)
	}
}
