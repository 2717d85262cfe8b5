// Package oidctest runs a real OpenID provider on loopback for tests: zitadel/oidc's
// OpenID-certified op package over an in-memory store, served over plain http on
// 127.0.0.1. Discovery, JWKS, authorization (code flow), token and userinfo are the
// library's own endpoints; only the login step is the test's: the provider either
// signs in the user a test chose with SignInAs at once, or shows a page listing the
// users, one button each, for a browser test to click.
//
// Clients are confidential (a secret; client_secret_basic or client_secret_post) or
// public (no secret), and a public client must use PKCE with S256. ID tokens are RS256,
// carry the nonce and, for the scopes asked for, the user's email and name and every
// custom claim the test gave the user (as Slack's https://slack.com/team_id); userinfo
// answers the same claims.
//
// What it does not do: refresh tokens, sessions (prompt=none always answers
// login_required), introspection, JWT-profile grants, dynamic registration.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is an account the provider can sign in.
type User struct {
	// Subject is the ID token's sub: stable and unique within the provider.
	Subject string
	// Email is given with scope email, as verified: the provider vouches for it, as
	// Slack and Google do for the addresses they answer.
	Email string
	// Name is given with scope profile.
	Name string
	// Extra are custom claims, added to the ID token and to userinfo whenever scope
	// openid is asked for (always, in OpenID Connect).
	Extra map[string]any
}

// Provider is a running OpenID provider, stopped at the test's cleanup.
type Provider struct {
	srv      *httptest.Server
	store    *storage
	accounts *accounts
}

// Start starts a provider with no clients and no users on a free loopback port.
func Start(t testing.TB) *Provider {
	t.Helper()
	// The issuer names the port, and the op needs the issuer before it can serve: so
	// the listener is taken first and the handler set before the server starts.
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()

	// RS256, as the providers the app signs in with use; a key per provider, so a
	// token of one test's provider never verifies against another's.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("oidctest: signing key: %v", err)
	}
	users := &accounts{users: map[string]User{}}
	store := newStorage(key, users)
	config := &op.Config{
		CryptoKey:      cryptoKey(),
		CodeMethodS256: true,
		AuthMethodPost: true,
	}
	// WithAllowInsecure lets the issuer be http: the loopback provider has no TLS
	// certificate, and the test's client talks to it over plain http.
	provider, err := op.NewProvider(config, store, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatalf("oidctest: provider: %v", err)
	}
	login := &loginPage{
		store:    store,
		accounts: users,
		callback: op.AuthCallbackURL(provider),
	}
	mux := http.NewServeMux()
	// The login page builds the callback URL from the issuer in the request's context,
	// which the op's interceptor puts there.
	mux.Handle(loginPath, op.NewIssuerInterceptor(provider.IssuerFromRequest).Handler(login))
	mux.Handle("/", provider)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return &Provider{srv: srv, store: store, accounts: users}
}

// Issuer is the provider's issuer URL (http://127.0.0.1:<port>), the one discovery
// answers at Issuer()+"/.well-known/openid-configuration".
func (p *Provider) Issuer() string { return p.srv.URL }

// AddClient registers a client allowed to redirect to exactly the redirectURIs given.
// With a secret it is confidential; with secret "" it is public and must use PKCE
// with S256 (its redirect URIs must then be on loopback, as for a native app).
func (p *Provider) AddClient(id, secret string, redirectURIs ...string) {
	p.store.addClient(&client{id: id, secret: secret, redirectURIs: redirectURIs})
}

// AddUser adds a user, or replaces the one with the same Subject.
func (p *Provider) AddUser(u User) { p.accounts.add(u) }

// SignInAs makes every sign-in from now on authenticate as the user with this subject
// at once, with no page shown; SignInAs("") brings back the page listing the users.
// A subject that is not (yet) added fails those sign-ins with a plain error page.
func (p *Provider) SignInAs(subject string) { p.accounts.signInAs(subject) }

// cryptoKey is the key the op encrypts its opaque access tokens with: random, as
// nothing outside this provider ever reads them.
func cryptoKey() (key [32]byte) {
	rand.Read(key[:]) // never fails: crypto/rand crashes the program instead
	return key
}
