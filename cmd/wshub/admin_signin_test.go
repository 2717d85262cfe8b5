package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// The operator gets a member of an account into the app of a production hub (no
// sign-in provider set up, nothing from loopback): a one-time link at the hub's
// public address, refused the second time, recorded in the audit log, and given only
// for a member of that account.
func TestAdminSignInLinkLetsAMemberInOnce(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	env := hubEnv(h, "WSHUB_PUBLIC_URL="+h.URL+"/")
	acct := h.Account.ID
	wshub(t, env, 0, "admin", "member", "add", "--account", acct, "--email", "ops@example.com", "--role", "owner", "--name", "Ops")

	out, _ := wshub(t, env, 0, "admin", "member", "signin-link", "--account", acct, "--email", "OPS@example.com")
	link, _ := out["link"].(string)
	if !strings.HasPrefix(link, h.URL+"/app/signin/link?token=") || out["expiresAt"] == "" || !strings.HasPrefix(out["memberId"].(string), "mem_") {
		t.Fatalf("expected a link at the public address with its end and member, got %v", out)
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	res, err := browser.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || res.Request.URL.Path != "/app/workspaces" {
		t.Fatalf("expected the link to sign in and land on the workspaces, got %d at %s:\n%s", res.StatusCode, res.Request.URL, body)
	}
	res, err = browser.Get(h.URL + "/app/audit")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "member.signin_link") || !strings.Contains(string(body), "operator") {
		t.Errorf("expected the audit log to record the operator's sign-in link, got:\n%s", body)
	}

	res, err = (&http.Client{}).Get(link)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 403 || !strings.Contains(string(body), "used or has expired") {
		t.Errorf("expected the link refused the second time, got %d:\n%s", res.StatusCode, body)
	}

	other, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Other")
	if _, errs := wshub(t, env, 1, "admin", "member", "signin-link", "--account", other["accountId"].(string), "--email", "ops@example.com"); !strings.Contains(errs, "is not a member of account") {
		t.Errorf("expected no link for an account the person is not in, got %q", errs)
	}
	if _, errs := wshub(t, env, 1, "admin", "member", "signin-link", "--account", acct, "--email", "nobody@example.com"); !strings.Contains(errs, "no member with the identity") {
		t.Errorf("expected no link for a person the hub does not know, got %q", errs)
	}
	if _, errs := wshub(t, env, 2, "admin", "member", "signin-link", "--account", acct); !strings.Contains(errs, "give exactly one of --email") {
		t.Errorf("expected a usage error without an identity, got %q", errs)
	}
}
