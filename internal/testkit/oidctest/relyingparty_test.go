package oidctest_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/wshub/wshub/internal/testkit/oidctest"
)

// relyingParty is the app's side of a sign-in, done as the app will do it: go-oidc's
// discovery and ID token verifier, x/oauth2's code flow, and an HTTP client with a
// cookie jar that follows redirects, standing in for the browser.
type relyingParty struct {
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	config   oauth2.Config
	browser  *http.Client
}

// newRelyingParty registers a client with the provider (secret "" for a public one)
// whose redirect URI is a real callback server on loopback.
func newRelyingParty(t *testing.T, p *oidctest.Provider, clientID, secret string) *relyingParty {
	t.Helper()
	callback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "callback reached")
	}))
	t.Cleanup(callback.Close)
	redirectURI := callback.URL + "/auth/callback"
	p.AddClient(clientID, secret, redirectURI)

	provider, err := oidc.NewProvider(t.Context(), p.Issuer())
	if err != nil {
		t.Fatalf("discovery: %v", err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &relyingParty{
		provider: provider,
		verifier: provider.Verifier(&oidc.Config{ClientID: clientID}),
		config: oauth2.Config{
			ClientID:     clientID,
			ClientSecret: secret,
			Endpoint:     provider.Endpoint(),
			RedirectURL:  redirectURI,
			Scopes:       []string{oidc.ScopeOpenID, "email", "profile"},
		},
		browser: &http.Client{Jar: jar},
	}
}

// visit follows authURL's redirects to their end and returns the last page's URL and
// body: the callback with its query when the sign-in went through.
func (rp *relyingParty) visit(t *testing.T, authURL string) (*url.URL, string) {
	t.Helper()
	resp, err := rp.browser.Get(authURL)
	if err != nil {
		t.Fatalf("GET %s: %v", authURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Request.URL, string(body)
}

// callbackQuery signs in through authURL and returns the query the callback got,
// failing the test when the redirects ended anywhere else.
func (rp *relyingParty) callbackQuery(t *testing.T, authURL string) url.Values {
	t.Helper()
	last, body := rp.visit(t, authURL)
	if !strings.HasPrefix(last.String(), rp.config.RedirectURL+"?") {
		t.Fatalf("the sign-in ended at %s, not at the callback %s:\n%s", last, rp.config.RedirectURL, body)
	}
	return last.Query()
}
