package oidctest_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/wshub/wshub/internal/testkit/oidctest"
)

var grace = oidctest.User{Subject: "U-GRACE", Email: "grace@example.com", Name: "Grace Hopper"}

func TestWithoutSignInAsTheLoginPageListsTheUsersAndSignsInTheOneChosen(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.AddUser(grace)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	page, body := rp.visit(t, rp.config.AuthCodeURL("s"))
	if !strings.HasPrefix(page.String(), p.Issuer()+"/login?") {
		t.Fatalf("the sign-in went to %s, not to the provider's login page", page)
	}
	for _, want := range []string{"Sign in as Ada Lovelace (ada@example.com)", "Sign in as Grace Hopper (grace@example.com)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the login page has no %q:\n%s", want, body)
		}
	}

	// What the page's form posts when Grace's button is clicked.
	resp, err := rp.browser.PostForm(p.Issuer()+"/login", url.Values{
		"authRequestID": {page.Query().Get("authRequestID")},
		"subject":       {grace.Subject},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	q := resp.Request.URL.Query()
	token, err := rp.config.Exchange(t.Context(), q.Get("code"))
	if err != nil {
		t.Fatalf("exchange after %s: %v", resp.Request.URL, err)
	}
	idToken, err := rp.verifier.Verify(t.Context(), token.Extra("id_token").(string))
	if err != nil {
		t.Fatal(err)
	}
	if idToken.Subject != grace.Subject {
		t.Errorf("signed in as %q, want %q", idToken.Subject, grace.Subject)
	}
}

func TestSignInAsChangesWhoTheNextSignInIs(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.AddUser(grace)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	for _, u := range []oidctest.User{ada, grace, ada} {
		p.SignInAs(u.Subject)
		q := rp.callbackQuery(t, rp.config.AuthCodeURL("s", oidc.Nonce("n")))
		token, err := rp.config.Exchange(t.Context(), q.Get("code"))
		if err != nil {
			t.Fatal(err)
		}
		idToken, err := rp.verifier.Verify(t.Context(), token.Extra("id_token").(string))
		if err != nil {
			t.Fatal(err)
		}
		if idToken.Subject != u.Subject {
			t.Errorf("signed in as %q, want %q", idToken.Subject, u.Subject)
		}
	}
}

func TestSignInAsAnUnknownSubjectFailsTheSignIn(t *testing.T) {
	p := oidctest.Start(t)
	p.SignInAs("U-NOBODY")
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	last, body := rp.visit(t, rp.config.AuthCodeURL("s"))
	if strings.HasPrefix(last.String(), rp.config.RedirectURL) || !strings.Contains(body, `no user with subject "U-NOBODY"`) {
		t.Fatalf("sign-in as an unknown subject ended at %s with %q", last, body)
	}
}

func TestPromptNoneAnswersLoginRequired(t *testing.T) {
	p := oidctest.Start(t)
	p.AddUser(ada)
	p.SignInAs(ada.Subject)
	rp := newRelyingParty(t, p, "wshub-app", "s3cret")

	q := rp.callbackQuery(t, rp.config.AuthCodeURL("s", oidc.Nonce("n"), oauth2.SetAuthURLParam("prompt", "none")))
	if q.Get("error") != "login_required" {
		t.Fatalf("callback query = %v, want error=login_required", q)
	}
}
