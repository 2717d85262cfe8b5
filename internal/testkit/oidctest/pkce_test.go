package oidctest_test

import (
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/wshub/wshub/internal/testkit/oidctest"
)

func TestAPublicClientSignsInWithPKCE(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-cli", "")

	verifier := oauth2.GenerateVerifier()
	q := rp.callbackQuery(t, rp.config.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	token, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	if _, err := rp.verifier.Verify(t.Context(), token.Extra("id_token").(string)); err != nil {
		t.Fatalf("verify ID token: %v", err)
	}
}

func TestAPublicClientWithoutS256PKCEIsRefusedAtTheAuthorizationEndpoint(t *testing.T) {
	for name, opts := range map[string][]oauth2.AuthCodeOption{
		"no challenge": nil,
		"plain":        {oauth2.SetAuthURLParam("code_challenge", "a-plain-challenge-of-more-than-43-characters-x"), oauth2.SetAuthURLParam("code_challenge_method", "plain")},
	} {
		t.Run(name, func(t *testing.T) {
			p := oidctest.Start(t)
			p.AddUser(ada)
			p.SignInAs(ada.Subject)
			rp := newRelyingParty(t, p, "wshub-cli", "")

			q := rp.callbackQuery(t, rp.config.AuthCodeURL("s", opts...))
			if q.Get("error") != "invalid_request" || q.Get("code") != "" {
				t.Fatalf("callback query = %v, want error=invalid_request and no code", q)
			}
			if q.Get("state") != "s" {
				t.Errorf("the error came back without the state: %v", q)
			}
		})
	}
}

func TestACodeIsNotExchangedWithoutItsVerifier(t *testing.T) {
	for name, secret := range map[string]string{"public": "", "confidential": "s3cret"} {
		t.Run(name, func(t *testing.T) {
			p := oidctest.Start(t)
			p.AddUser(ada)
			p.SignInAs(ada.Subject)
			rp := newRelyingParty(t, p, "client", secret)

			q := rp.callbackQuery(t, rp.config.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
			if _, err := rp.config.Exchange(t.Context(), q.Get("code")); err == nil || !strings.Contains(err.Error(), "invalid_request") {
				t.Errorf("exchange with no verifier: err = %v, want invalid_request", err)
			}
			_, err := rp.config.Exchange(t.Context(), q.Get("code"), oauth2.VerifierOption(oauth2.GenerateVerifier()))
			if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
				t.Errorf("exchange with another verifier: err = %v, want invalid_grant", err)
			}
		})
	}
}
