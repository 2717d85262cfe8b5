package gitrepo

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/forgetest"
)

// proj is a project as core hands it to the mirror: its id and repository.
func proj(id, repository string) *core.Project {
	return &core.Project{ID: id, Repository: repository}
}

// withToken is p with its own token credential, opened as core opens it.
func withToken(p *core.Project, token string) *core.Project {
	p.CredentialKind, p.Credential = core.CredentialToken, &core.ProjectCredential{Kind: core.CredentialToken, Token: token}
	return p
}

// recordingGit records what every process the hub's git starts was given.
func recordingGit(t *testing.T, log string) string { return forgetest.RecordingGit(t, log) }

// Two projects of two accounts, each with its own token for its own private
// repository: each reaches only its own, the hub-wide token is not used for either,
// and neither git process is given the other's token, in its arguments or environment.
func TestEachProjectReachesItsRepositoryWithItsOwnToken(t *testing.T) {
	const tokenA, tokenB, hubToken = "tok_accountA_1111", "tok_accountB_2222", "tok_hubwide_3333"
	urlA, bareA := privateRemote(t, tokenA)
	urlB, _ := privateRemote(t, tokenB)
	ctx := context.Background()
	logA, logB := filepath.Join(t.TempDir(), "a.log"), filepath.Join(t.TempDir(), "b.log")
	auth := &ProjectCredentials{Fallback: &Credentials{HTTPSToken: hubToken}, KeyDir: t.TempDir()}
	mA := &Mirror{Dir: t.TempDir(), Auth: auth, Git: recordingGit(t, logA)}
	mB := &Mirror{Dir: t.TempDir(), Auth: auth, Git: recordingGit(t, logB)}

	a := withToken(proj("prj_a", urlA), tokenA)
	b := withToken(proj("prj_b", urlB), tokenB)
	pathA, _, err := mA.Mirror(ctx, a)
	if err != nil {
		t.Fatalf("project A with its token: %v", err)
	}
	if _, _, err := mB.Mirror(ctx, b); err != nil {
		t.Fatalf("project B with its token: %v", err)
	}
	// A project given the other's repository does not reach it with its own token.
	stolen := withToken(proj("prj_a2", urlB), tokenA)
	if _, _, err := mA.Mirror(ctx, stolen); err == nil || strings.Contains(err.Error(), tokenA) {
		t.Fatalf("expected project A's token refused by B's repository, without showing it; got %v", err)
	}
	// The hub-wide token is the fallback only: B's repository refuses it too.
	if _, _, err := mA.Mirror(ctx, proj("prj_plain", urlB)); err == nil {
		t.Fatal("expected B's repository to refuse the hub-wide token")
	}

	// Project A's workspace pushes with A's token.
	creds, err := auth.For(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	co := &Checkout{Dir: filepath.Join(t.TempDir(), "ws", "checkout"), Credentials: creds, Git: recordingGit(t, logA)}
	if err := co.Create(ctx, pathA, "wshub/a", "main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(co.Dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := co.CommitAll(ctx, "wshub/a", "wshub: turn_1"); !ok || err != nil {
		t.Fatalf("commit: %v, %v", ok, err)
	}
	if err := co.Push(ctx, urlA, "wshub/a"); err != nil {
		t.Fatalf("push with A's token: %v", err)
	}
	if got := testGit(t, bareA, "log", "-1", "--format=%s", "wshub/a"); got != "wshub: turn_1" {
		t.Fatalf("expected A's branch pushed, got %q", got)
	}

	for _, c := range []struct {
		log, own, other string
	}{{logA, tokenA, tokenB}, {logB, tokenB, tokenA}} {
		got, err := os.ReadFile(c.log)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(got, []byte(c.own)) {
			t.Errorf("%s: expected git given its project's token in its environment", filepath.Base(c.log))
		}
		if bytes.Contains(got, []byte(c.other)) {
			t.Errorf("%s: the other project's token reached this git's arguments or environment", filepath.Base(c.log))
		}
		for line := range strings.Lines(string(got)) {
			if strings.HasPrefix(line, "ARGS ") && (strings.Contains(line, tokenA) || strings.Contains(line, tokenB)) {
				t.Errorf("a token is on git's command line: %s", line)
			}
		}
	}
	if logged, _ := os.ReadFile(logB); bytes.Contains(logged, []byte(hubToken)) {
		t.Error("project B's git was given the hub-wide token besides its own")
	}
}

// A project's own credentials leave out the hub user's ssh agent and ssh command: a
// project without a key of its own must not borrow the hub's.
func TestOwnCredentialsDoNotInheritTheHubsSSHAccess(t *testing.T) {
	environ := []string{"PATH=/bin", "SSH_AUTH_SOCK=/run/agent", "GIT_SSH_COMMAND=ssh -i /hub/key"}
	for _, own := range []bool{false, true} {
		env := strings.Join(gitEnv(environ, own), " ")
		if has := strings.Contains(env, "SSH_AUTH_SOCK") || strings.Contains(env, "/hub/key"); has == own {
			t.Errorf("own=%v: the hub's ssh access given: %v (env %s)", own, has, env)
		}
	}
}

// A deploy key given as bytes is written to a file of its own, mode 0600, for the
// length of one git command, named by GIT_SSH_COMMAND, and removed after.
func TestAProjectsSSHKeyLivesOnlyForItsCommand(t *testing.T) {
	requireGit(t)
	keyDir := filepath.Join(t.TempDir(), "keys")
	out := filepath.Join(t.TempDir(), "seen")
	// ssh is a script that records the key file git names and its mode, then fails as
	// an unreachable host does.
	bin := t.TempDir()
	ssh := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = -i ]; then shift; stat -c '%a' \"$1\" > '" + out + "'; cat \"$1\" >> '" + out + "'; fi; shift; done\nexit 255\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(ssh), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nprojectkey\n-----END OPENSSH PRIVATE KEY-----\n"
	p := proj("prj_ssh", "ssh://git@example.invalid/org/repo.git")
	p.CredentialKind, p.Credential = core.CredentialSSHKey, &core.ProjectCredential{Kind: core.CredentialSSHKey, SSHKey: key}
	m := &Mirror{Dir: t.TempDir(), Auth: &ProjectCredentials{KeyDir: keyDir}}
	if _, _, err := m.Mirror(context.Background(), p); err == nil {
		t.Fatal("expected the clone to fail (the ssh stand-in refuses)")
	}
	seen, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("ssh was not run with the project's key: %v", err)
	}
	if want := "600\n" + key; string(seen) != want {
		t.Errorf("ssh saw %q, want %q", seen, want)
	}
	if left, _ := os.ReadDir(keyDir); len(left) != 0 {
		t.Errorf("the key file outlived its command: %v", left)
	}
}
