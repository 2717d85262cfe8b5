package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// key create takes scopes, projects and an expiry, refuses what it cannot use in
// words, and key list shows them beside the keys without limits.
func TestAdminKeyCreateWithScopesProjectsAndExpiry(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	env := hubEnv(h)
	acct := h.Account.ID
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scopes", "workspaces:read,everything"}, `unknown scope "everything"`},
		{[]string{"--projects", "prj_0000000000000000"}, `no project "prj_0000000000000000"`},
		{[]string{"--expires", "2020-01-01T00:00:00Z"}, "not in the future"},
		{[]string{"--expires", "tomorrow"}, "not an RFC 3339 time"},
	} {
		args := append([]string{"admin", "key", "create", "--account", acct, "--name", "bad"}, c.args...)
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, env, &out, &errb); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: expected a failure saying %q, got exit %d: %s", c.args, c.want, code, errb.String())
		}
	}
	wshub(t, env, 0, "admin", "key", "create", "--account", acct, "--name", "ci", "--scopes", "workspaces:read,messages:write",
		"--projects", h.Project.ID, "--expires", "2099-01-02T03:04:05Z")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"admin", "key", "list", "--account", acct}, env, &out, &errb); code != 0 {
		t.Fatalf("key list: exit %d: %s", code, errb.String())
	}
	var keys []map[string]any
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil || len(keys) != 2 {
		t.Fatalf("expected the hub's key and ci listed, got %s (%v)", out.String(), err)
	}
	full, ci := keys[0], keys[1]
	if full["scopes"] != nil || full["projects"] != nil || full["expiresAt"] != nil {
		t.Errorf("expected a key without limits listed with null scopes, projects and expiry, got %v", full)
	}
	if ci["name"] != "ci" || ci["expiresAt"] != "2099-01-02T03:04:05Z" ||
		!sameList(ci["scopes"], "workspaces:read", "messages:write") || !sameList(ci["projects"], h.Project.ID) {
		t.Errorf("expected ci with its scopes, project and expiry, got %v", ci)
	}
}

// sameList reports whether a decoded JSON array holds want, in order.
func sameList(v any, want ...string) bool {
	got, _ := v.([]any)
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
