package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/forge/github"
	"github.com/wshub/wshub/adapters/gitrepo"
	"github.com/wshub/wshub/core"
	fake "github.com/wshub/wshub/internal/testkit/forgetest"
	fakegithub "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// The hub's git takes its installation tokens from Apps.
var _ gitrepo.Apps = (*github.Apps)(nil)

const (
	appID          = 42
	installationID = 7
)

// app is a fake GitHub with acme/widgets and App 42 installed on it as 7 with p, and
// the App's private key.
func app(t *testing.T, p fakegithub.Permission) (*fakegithub.Server, string, []byte) {
	t.Helper()
	s := fakegithub.Start(t)
	url := s.NewRepo(t, owner, name)
	key := s.NewApp(t, appID)
	s.Install(appID, installationID, p, owner+"/"+name)
	return s, url, key
}

func TestAnInstallationTokenIsMintedOnceAndServesEveryCall(t *testing.T) {
	s, url, key := app(t, fakegithub.Write)
	apps := &github.Apps{}
	ctx := t.Context()
	var wg sync.WaitGroup
	tokens := make([]string, 4)
	for i := range tokens {
		wg.Go(func() {
			tok, err := apps.InstallationToken(ctx, url, appID, installationID, key)
			if err != nil {
				t.Errorf("expected a token, got %v", err)
			}
			tokens[i] = tok
		})
	}
	wg.Wait()
	if n := s.TokensMinted(installationID); n != 1 {
		t.Fatalf("expected one token minted for four calls, got %d", n)
	}
	for _, tok := range tokens {
		if tok != s.InstallationTokens(installationID)[0] {
			t.Fatalf("expected every call to get the minted token, got %q", tokens)
		}
	}

	// The token opens a pull request as the App.
	s.PushBranch(t, owner, name, branch)
	f := &github.Forge{Token: func(ctx context.Context, p *core.Project) (string, error) {
		return apps.InstallationToken(ctx, p.Repository, appID, installationID, key)
	}}
	p := &core.Project{Repository: url}
	if _, err := f.OpenPullRequest(ctx, p, core.PullRequestChange{Head: branch, Base: "main", Title: "From the App"}); err != nil {
		t.Fatalf("expected the App's token to open a pull request, got %v", err)
	}
	if pr, _ := s.Pull(owner, name, 1); pr.Author != "app-42[bot]" {
		t.Errorf("expected the pull request opened by the App, got %q", pr.Author)
	}
	if _, err := f.GetPullRequest(ctx, p, 1); err != nil || s.TokensMinted(installationID) != 1 {
		t.Errorf("expected the same token reused, got %v and %d minted", err, s.TokensMinted(installationID))
	}
}

func TestATokenAboutToEndIsMintedAnew(t *testing.T) {
	s, url, key := app(t, fakegithub.Write)
	// Within ghinstallation's minute of grace: stale as soon as it is minted.
	s.SetTokenLifetime(30 * time.Second)
	apps := &github.Apps{}
	first, err1 := apps.InstallationToken(t.Context(), url, appID, installationID, key)
	second, err2 := apps.InstallationToken(t.Context(), url, appID, installationID, key)
	if err1 != nil || err2 != nil || first == second || s.TokensMinted(installationID) != 2 {
		t.Fatalf("expected a second token for a first about to end, got %q, %q (%v, %v), %d minted",
			first, second, err1, err2, s.TokensMinted(installationID))
	}
}

func TestAKeyGitHubDoesNotKnowIsRefusedByItsJWTCheck(t *testing.T) {
	s, url, _ := app(t, fakegithub.Write)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	wrong := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(other)})
	_, err = (&github.Apps{}).InstallationToken(t.Context(), url, appID, installationID, wrong)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 401 || r.Reason != "GitHub gave App 42 no token for installation 7: A JSON web token could not be decoded" {
		t.Fatalf("expected GitHub's 401 in its words, got %#v", err)
	}
	if body := strings.Split(string(wrong), "\n")[1]; strings.Contains(err.Error(), body) {
		t.Errorf("the refusal holds the key: %v", err)
	}
	if s.TokensMinted(installationID) != 0 {
		t.Errorf("expected no token minted")
	}
}

func TestAnInstallationThatIsNotTheAppsIsRefused(t *testing.T) {
	s, url, key := app(t, fakegithub.Write)
	s.NewApp(t, 99)
	s.Install(99, 8, fakegithub.Write, owner+"/"+name)
	_, err := (&github.Apps{}).InstallationToken(t.Context(), url, appID, 8, key)
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Status != 404 || !strings.Contains(r.Reason, "Not Found (no such installation, or it is another App's)") {
		t.Fatalf("expected GitHub's 404 in words, got %#v", err)
	}
}

func TestAKeyThatIsNoKeyIsRefusedWithoutEchoingIt(t *testing.T) {
	_, url, _ := app(t, fakegithub.Write)
	secret := "-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5IGF0IGFsbA==\n-----END RSA PRIVATE KEY-----\n"
	_, err := (&github.Apps{}).InstallationToken(t.Context(), url, appID, installationID, []byte(secret))
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || r.Reason != "the private key of GitHub App 42 is not a PEM RSA private key" {
		t.Fatalf("expected the key refused in words, got %#v", err)
	}
	if strings.Contains(err.Error(), "bm90IGEga2V5") {
		t.Errorf("the refusal holds the key: %v", err)
	}
}

func TestTheMintedTokenPushesOverHTTPSAsGitDoes(t *testing.T) {
	s, url, key := app(t, fakegithub.Write)
	tok, err := (&github.Apps{}).InstallationToken(t.Context(), url, appID, installationID, key)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := fake.Push(t, url, "x-access-token", tok, "wshub/pushed"); err != nil {
		t.Fatalf("expected the push with the installation token to succeed, got %v: %s", err, out)
	}
	if out, err := exec.Command("git", "--git-dir", s.BareRepo(owner, name), "rev-parse", "--verify", "refs/heads/wshub/pushed").CombinedOutput(); err != nil {
		t.Fatalf("expected the branch on GitHub, got %v: %s", err, out)
	}
	if out, err := fake.Push(t, url, "x-access-token", "ghs_notMinted", "wshub/refused"); err == nil || !strings.Contains(out, "Authentication failed") {
		t.Errorf("expected a token GitHub did not mint refused, got %v: %s", err, out)
	}
}

func TestAReadOnlyInstallationCannotPush(t *testing.T) {
	_, url, key := app(t, fakegithub.Read)
	tok, err := (&github.Apps{}).InstallationToken(t.Context(), url, appID, installationID, key)
	if err != nil {
		t.Fatal(err)
	}
	out, err := fake.Push(t, url, "x-access-token", tok, "wshub/refused")
	if err == nil || !strings.Contains(out, "403") {
		t.Fatalf("expected the push refused (403), got %v: %s", err, out)
	}
}
