package oidctest

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Adapted from zitadel/oidc's example/server/storage/client.go (Apache License 2.0),
// trimmed to the authorization code flow.

// client is a registered OAuth client: confidential with a secret, public without.
type client struct {
	id           string
	secret       string
	redirectURIs []string
}

var _ op.Client = (*client)(nil)

func (c *client) public() bool { return c.secret == "" }

func (c *client) GetID() string                    { return c.id }
func (c *client) RedirectURIs() []string           { return c.redirectURIs }
func (c *client) PostLogoutRedirectURIs() []string { return nil }

// ApplicationType decides which redirect URIs the op accepts over plain http: a web
// (confidential) client's exact http URIs with the code flow, a native (public)
// client's loopback URIs.
func (c *client) ApplicationType() op.ApplicationType {
	if c.public() {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}

// AuthMethod none makes the op's token endpoint refuse a code without PKCE; a
// confidential client may send its secret in the Authorization header or the form.
func (c *client) AuthMethod() oidc.AuthMethod {
	if c.public() {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}

func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

func (c *client) GrantTypes() []oidc.GrantType { return []oidc.GrantType{oidc.GrantTypeCode} }

// LoginURL is where the op sends the browser to sign in: this provider's login page.
func (c *client) LoginURL(authRequestID string) string { return loginURL(authRequestID) }

func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration      { return time.Hour }

// DevMode would loosen the redirect URI rules; the tests should meet the real ones.
func (c *client) DevMode() bool { return false }

func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(scopes []string) []string { return scopes }
}

// IsScopeAllowed is asked for scopes beyond OpenID Connect's: there are none.
func (c *client) IsScopeAllowed(string) bool { return false }

// IDTokenUserinfoClaimsAssertion puts email and name in the ID token even though an
// access token is issued too, as Slack and Google do: the app reads them from there.
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }

func (c *client) ClockSkew() time.Duration { return 0 }
