package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gofiber/fiber/v2"
	"golang.org/x/oauth2"

	"github.com/wshub/wshub/core"
)

// oidcClient signs people in with an OpenID Connect provider: the authorization code
// flow with PKCE, the state and the nonce checked, the ID token verified by go-oidc.
// The provider's discovery document is read on the first sign-in, not at start-up:
// a hub starts while its provider is down.
type oidcClient struct {
	cfg      OIDC
	mu       sync.Mutex
	provider *oidc.Provider
}

func newOIDCClient(cfg OIDC) *oidcClient { return &oidcClient{cfg: cfg} }

// discover reads the provider's discovery document once; redirect is where it sends
// people back.
func (o *oidcClient) discover(ctx context.Context, redirect string) (*oidc.Provider, oauth2.Config, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider == nil {
		p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
		if err != nil {
			return nil, oauth2.Config{}, fmt.Errorf("the sign-in provider %s did not answer: %w", o.cfg.Issuer, err)
		}
		o.provider = p
	}
	return o.provider, oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, RedirectURL: redirect,
		Endpoint: o.provider.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}, nil
}

// signInCookie holds one sign-in's state, nonce and PKCE verifier between the
// redirect to the provider and its return: on the browser, so any replica can finish
// it. It lives ten minutes, and SameSite=Lax sends it with the provider's redirect.
const signInCookieLife = 10 * time.Minute

func (a *app) signInCookieName() string {
	if a.opts.Insecure {
		return "wshub_signin"
	}
	return "__Host-wshub_signin"
}

func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// startOIDC sends the browser to the provider.
func (a *app) startOIDC(c *fiber.Ctx) error {
	if a.oidc == nil {
		return a.refuse(c, fiber.StatusNotFound, "This hub has no sign-in provider configured.")
	}
	_, conf, err := a.oidc.discover(c.UserContext(), a.redirectBase()+"/app/signin/callback")
	if err != nil {
		return a.refuse(c, fiber.StatusBadGateway, err.Error())
	}
	state, nonce, verifier := randomString(), randomString(), oauth2.GenerateVerifier()
	a.setSignInCookie(c, state+"."+nonce+"."+verifier)
	return c.Redirect(conf.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), fiber.StatusSeeOther)
}

// oidcClaims are the ID token's claims the hub reads; Slack's OpenID Connect names
// the person's team and user in its own claims.
type oidcClaims struct {
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
	SlackTeam     string `json:"https://slack.com/team_id"`
	SlackUser     string `json:"https://slack.com/user_id"`
}

var errSignIn = errors.New("the sign-in did not come back as it left; start again")

// finishOIDC takes the provider's answer: the code exchanged with the verifier, the
// ID token verified with its nonce, the person signed in.
func (a *app) finishOIDC(c *fiber.Ctx) error {
	if a.oidc == nil {
		return a.refuse(c, fiber.StatusNotFound, "This hub has no sign-in provider configured.")
	}
	saved := a.takeSignInCookie(c)
	if e := c.Query("error"); e != "" {
		return a.refuse(c, fiber.StatusUnauthorized, "The sign-in provider refused: "+e)
	}
	state, nonce, verifier, ok := splitSignIn(saved)
	if !ok || c.Query("state") != state || c.Query("code") == "" {
		return a.refuse(c, fiber.StatusBadRequest, errSignIn.Error())
	}
	ctx := c.UserContext()
	provider, conf, err := a.oidc.discover(ctx, a.redirectBase()+"/app/signin/callback")
	if err != nil {
		return a.refuse(c, fiber.StatusBadGateway, err.Error())
	}
	tok, err := conf.Exchange(ctx, c.Query("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		a.log.Warn("app sign-in: code exchange failed", "err", err)
		return a.refuse(c, fiber.StatusUnauthorized, "The sign-in provider did not accept the sign-in; start again.")
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := provider.Verifier(&oidc.Config{ClientID: a.opts.OIDC.ClientID}).Verify(ctx, raw)
	if err != nil || idt.Nonce != nonce {
		a.log.Warn("app sign-in: ID token refused", "err", err)
		return a.refuse(c, fiber.StatusUnauthorized, "The sign-in provider's answer did not check out; start again.")
	}
	var claims oidcClaims
	if err := idt.Claims(&claims); err != nil {
		return a.refuse(c, fiber.StatusUnauthorized, "The sign-in provider's answer did not check out; start again.")
	}
	in := core.SignInInput{Identity: core.Identity{Kind: core.IdentityOIDC, Subject: idt.Issuer + " " + idt.Subject}, Name: claims.Name}
	if claims.EmailVerified != nil && *claims.EmailVerified {
		in.Email = claims.Email
	}
	// Only Slack speaks for a Slack identity: another provider (or a person who can
	// edit their own profile's claims there) could name any team and user.
	if idt.Issuer == a.slackIssuer() && claims.SlackTeam != "" && claims.SlackUser != "" {
		if id, err := core.NewIdentity(core.IdentitySlack, claims.SlackTeam+":"+claims.SlackUser); err == nil {
			in.Identity = id // Slack's own ids: the member a Slack thread knows
		}
	}
	s, token, err := a.core.SignIn(ctx, in)
	return a.signedIn(c, s, token, err)
}

// SlackIssuer is Slack's OpenID Connect issuer: only its ID tokens name a Slack team
// and user the hub believes.
const SlackIssuer = "https://slack.com"

func (a *app) slackIssuer() string {
	if a.opts.OIDC.SlackIssuer != "" {
		return a.opts.OIDC.SlackIssuer
	}
	return SlackIssuer
}

func splitSignIn(v string) (state, nonce, verifier string, ok bool) {
	var rest string
	state, rest, ok = strings.Cut(v, ".")
	if !ok {
		return "", "", "", false
	}
	nonce, verifier, ok = strings.Cut(rest, ".")
	return state, nonce, verifier, ok && state != "" && nonce != "" && verifier != ""
}

// signedIn sets the session's cookie and opens the app, or says why not.
func (a *app) signedIn(c *fiber.Ctx, s *core.AppSession, token string, err error) error {
	if err != nil {
		if code := core.ErrorCode(err); code == core.CodeNotAMember || code == core.CodeSessionInvalid {
			var ce *core.Error
			errors.As(err, &ce)
			return a.refuse(c, fiber.StatusForbidden, ce.Detail)
		}
		return a.fail(c, err)
	}
	a.setSessionCookie(c, token, s.ExpiresAt)
	return c.Redirect("/app/", fiber.StatusSeeOther)
}

// useLink signs in with a one-time link. Only the operator makes them (wshub admin
// member signin-link, or the development hub for its owner), for a member of the
// account, so a production hub takes them too: that is how its first owner gets in
// before a sign-in provider is set up, and how an owner locked out gets back.
func (a *app) useLink(c *fiber.Ctx) error {
	s, token, err := a.core.SignInWithLink(c.UserContext(), c.Query("token"))
	return a.signedIn(c, s, token, err)
}
