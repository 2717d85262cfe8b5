package oidctest_test

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/wshub/wshub/internal/testkit/browsertest"
	"github.com/wshub/wshub/internal/testkit/oidctest"
)

func TestABrowserSignsInByClickingAUserOnTheAccessibleLoginPage(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.AddUser(grace)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")
	b := browsertest.Start(t)

	b.Open(t, rp.config.AuthCodeURL("state-b", oidc.Nonce("nonce-b")))
	b.WaitFor(t, `button[value="U-GRACE"]`)
	b.Axe(t)
	b.Click(t, `button[value="U-GRACE"]`)
	b.WaitUntil(t, fmt.Sprintf("location.href.startsWith(%q)", rp.config.RedirectURL+"?"))

	callback, err := url.Parse(b.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	if callback.Query().Get("state") != "state-b" {
		t.Errorf("the callback's state is %q", callback.Query().Get("state"))
	}
	token, err := rp.config.Exchange(t.Context(), callback.Query().Get("code"))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	idToken, err := rp.verifier.Verify(t.Context(), token.Extra("id_token").(string))
	if err != nil {
		t.Fatal(err)
	}
	if idToken.Subject != grace.Subject || idToken.Nonce != "nonce-b" {
		t.Errorf("signed in as %q with nonce %q, want %q with nonce-b", idToken.Subject, idToken.Nonce, grace.Subject)
	}
}
