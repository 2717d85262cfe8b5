package github_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/wshub/wshub/adapters/forge/github"
	"github.com/wshub/wshub/core"
	fakegithub "github.com/wshub/wshub/internal/testkit/forgetest/github"
)

// A repository's installation found with the App's JWT, as an account's App is used
// for a project without a credential: asked once for every call, its token minted
// once; one that is not the account's is refused in words; a repository the App is
// not on is core.ErrNoRows (the project keeps the hub-wide credential); a JWT signed
// by another key is GitHub's 401.
func TestARepositorysInstallationIsFoundOnceByTheAppsJWT(t *testing.T) {
	s, url, key := app(t, fakegithub.Write)
	apps := &github.Apps{}
	ctx := t.Context()
	for range 3 {
		if tok, err := apps.RepositoryToken(ctx, url, appID, key, []int64{installationID}); err != nil || !strings.HasPrefix(tok, "ghs_") {
			t.Fatalf("expected the installation's token, got %q, %v", tok, err)
		}
	}
	if n, m := s.InstallationLookups(owner, name), s.TokensMinted(installationID); n != 1 || m != 1 {
		t.Errorf("expected one lookup and one token for three calls, got %d and %d", n, m)
	}

	_, err := (&github.Apps{}).RepositoryToken(ctx, url, appID, key, []int64{installationID + 1})
	var r *core.ForgeRefusal
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "installation 7, which is not one of the account's installations") {
		t.Errorf("expected another's installation refused in words, got %v", err)
	}

	other := s.NewRepo(t, owner, "elsewhere")
	if _, err := apps.RepositoryToken(ctx, other, appID, key, []int64{installationID}); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("expected a repository the App is not on to be ErrNoRows, got %v", err)
	}

	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	wrong := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(stranger)})
	_, err = (&github.Apps{}).RepositoryToken(ctx, url, appID, wrong, []int64{installationID})
	if !errors.As(err, &r) || r.Status != 401 || !strings.Contains(r.Reason, "A JSON web token could not be decoded") {
		t.Errorf("expected GitHub's 401 for a JWT of another key, got %#v", err)
	}
}
