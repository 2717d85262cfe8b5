package oidctest_test

import (
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/wshub/wshub/internal/testkit/oidctest"
)

var ada = oidctest.User{
	Subject: "U-ADA",
	Email:   "ada@example.com",
	Name:    "Ada Lovelace",
	Extra: map[string]any{
		"https://slack.com/team_id": "T0001",
		"https://slack.com/user_id": "U0001",
	},
}

// claims are the ID token's and userinfo's claims the tests read.
type claims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	Name          string `json:"name"`
	TeamID        string `json:"https://slack.com/team_id"`
	UserID        string `json:"https://slack.com/user_id"`
}

func TestAConfidentialClientSignsInWithPKCEAndGetsAVerifiedIDTokenWithTheCustomClaims(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	state, nonce, verifier := "state-1", "nonce-1", oauth2.GenerateVerifier()
	q := rp.callbackQuery(t, rp.config.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)))
	if q.Get("state") != state {
		t.Fatalf("state = %q, want %q", q.Get("state"), state)
	}
	token, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	raw, ok := token.Extra("id_token").(string)
	if !ok {
		t.Fatalf("the token response has no id_token")
	}
	// Verify checks the signature against the provider's JWKS, the issuer, the
	// audience and the expiry.
	idToken, err := rp.verifier.Verify(t.Context(), raw)
	if err != nil {
		t.Fatalf("verify ID token: %v", err)
	}
	if idToken.Nonce != nonce {
		t.Errorf("nonce = %q, want %q", idToken.Nonce, nonce)
	}
	var got claims
	if err := idToken.Claims(&got); err != nil {
		t.Fatal(err)
	}
	want := claims{Subject: ada.Subject, Email: ada.Email, EmailVerified: true, Name: ada.Name, TeamID: "T0001", UserID: "U0001"}
	if got != want {
		t.Errorf("ID token claims = %+v, want %+v", got, want)
	}
	if err := idToken.VerifyAccessToken(token.AccessToken); err != nil {
		t.Errorf("at_hash: %v", err)
	}

	info, err := rp.provider.UserInfo(t.Context(), oauth2.StaticTokenSource(token))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	got = claims{}
	if err := info.Claims(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("userinfo claims = %+v, want %+v", got, want)
	}
}

func TestAConfidentialClientSignsInWithoutPKCE(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	q := rp.callbackQuery(t, rp.config.AuthCodeURL("s", oidc.Nonce("n")))
	token, err := rp.config.Exchange(t.Context(), q.Get("code"))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idToken, err := rp.verifier.Verify(t.Context(), token.Extra("id_token").(string))
	if err != nil {
		t.Fatalf("verify ID token: %v", err)
	}
	if idToken.Subject != ada.Subject {
		t.Errorf("sub = %q, want %q", idToken.Subject, ada.Subject)
	}
}

func TestTheClientSecretCanGoInTheHeaderOrTheForm(t *testing.T) {
	for name, style := range map[string]oauth2.AuthStyle{"header": oauth2.AuthStyleInHeader, "form": oauth2.AuthStyleInParams} {
		t.Run(name, func(t *testing.T) {
			p := oidctest.Start(t)
			p.AddUser(ada)
			p.SignInAs(ada.Subject)
			rp := newRelyingParty(t, p, "wshub-app", "s3cret")
			rp.config.Endpoint.AuthStyle = style
			q := rp.callbackQuery(t, rp.config.AuthCodeURL("s"))
			if _, err := rp.config.Exchange(t.Context(), q.Get("code")); err != nil {
				t.Fatalf("exchange: %v", err)
			}
		})
	}
}

func TestAWrongClientSecretIsRefused(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	q := rp.callbackQuery(t, rp.config.AuthCodeURL("s"))
	rp.config.ClientSecret = "guess"
	_, err := rp.config.Exchange(t.Context(), q.Get("code"))
	if err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Fatalf("exchange with a wrong secret: err = %v, want invalid_client", err)
	}
}

func TestACodeIsGoodForOneExchangeOnly(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	q := rp.callbackQuery(t, rp.config.AuthCodeURL("s"))
	if _, err := rp.config.Exchange(t.Context(), q.Get("code")); err != nil {
		t.Fatalf("first exchange: %v", err)
	}
	if _, err := rp.config.Exchange(t.Context(), q.Get("code")); err == nil {
		t.Fatal("the same code was exchanged twice")
	}
}

func TestAnIDTokenOfAnotherProviderDoesNotVerify(t *testing.T) {
	mine, other := oidctest.Start(t), oidctest.Start(t)
	for _, p := range []*oidctest.Provider{mine, other} {
		p.AddUser(ada)
		p.SignInAs(ada.Subject)
	}
	rpMine := newRelyingParty(t, mine, "wshub-app", "s3cret")
	rpOther := newRelyingParty(t, other, "wshub-app", "s3cret")

	q := rpOther.callbackQuery(t, rpOther.config.AuthCodeURL("s"))
	token, err := rpOther.config.Exchange(t.Context(), q.Get("code"))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if _, err := rpMine.verifier.Verify(t.Context(), token.Extra("id_token").(string)); err == nil {
		t.Fatal("an ID token of another provider verified")
	}
}

func TestAnUnregisteredRedirectURIIsNotRedirectedTo(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	registered := rp.config.RedirectURL
	rp.config.RedirectURL = registered + "/elsewhere"
	last, _ := rp.visit(t, rp.config.AuthCodeURL("s"))
	if strings.HasPrefix(last.String(), registered) {
		t.Fatalf("the provider redirected to %s, which is not registered", last)
	}
}
