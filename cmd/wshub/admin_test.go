package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
	"github.com/wshub/wshub/internal/testkit/eventually"
)

// adminEnv points the command at a fresh database and data directory.
func adminEnv(t *testing.T) environ {
	return testEnviron("DATABASE_URL="+pgtest.NewDatabase(t), "WSHUB_DATA_DIR="+t.TempDir(), "WSHUB_CONTENT_KEY="+hubtest.NewContentKey(t))
}

// hubEnv points the command at a test hub's database, content key and data directory.
func hubEnv(h *hubtest.Hub, changes ...string) environ {
	return testEnviron("DATABASE_URL="+h.DBURL, "WSHUB_CONTENT_KEY="+h.Config.ContentKey, "WSHUB_DATA_DIR="+h.Config.DataDir).with(changes...)
}

// wshub runs the command in-process with env and decodes its JSON output.
func wshub(t *testing.T, env environ, wantCode int, args ...string) (map[string]any, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, env, &out, &errb)
	if code != wantCode {
		t.Fatalf("wshub %s: expected exit %d, got %d; stderr: %s", strings.Join(args, " "), wantCode, code, errb.String())
	}
	var m map[string]any
	if strings.HasPrefix(strings.TrimSpace(out.String()), "{") {
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("wshub %s: output is not JSON: %v: %s", strings.Join(args, " "), err, out.String())
		}
	}
	return m, out.String() + errb.String()
}

func TestAdminAccountKeyProject(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	id, _ := acct["accountId"].(string)
	if !strings.HasPrefix(id, "acct_") {
		t.Fatalf("expected an acct_ id, got %v", acct)
	}

	upd, _ := wshub(t, env, 0, "admin", "account", "update", "--account", id, "--billing-hold", "--billing-period-end", "2030-01-02T03:04:05Z")
	if upd["billingHold"] != true || upd["billingPeriodEnd"] != "2030-01-02T03:04:05Z" || upd["entitled"] != true || upd["metered"] != true {
		t.Fatalf("expected hold on, period set, still entitled, metered by default; got %v", upd)
	}
	upd, _ = wshub(t, env, 0, "admin", "account", "update", "--account", id, "--billing-hold=false", "--billing-period-end", "none", "--entitled=false", "--metered=false")
	if upd["billingHold"] != false || upd["billingPeriodEnd"] != nil || upd["entitled"] != false || upd["metered"] != false {
		t.Fatalf("expected hold off, no period, not entitled, not metered; got %v", upd)
	}

	key, _ := wshub(t, env, 0, "admin", "key", "create", "--account", id, "--name", "ci")
	if k, _ := key["key"].(string); !strings.HasPrefix(k, "svc_") || len(k) != 4+43 {
		t.Fatalf("expected svc_ + 43 characters, got %v", key)
	}
	wshub(t, env, 0, "admin", "key", "revoke", "--key-id", key["keyId"].(string))
	_, msg := wshub(t, env, 1, "admin", "key", "revoke", "--key-id", key["keyId"].(string))
	if !strings.Contains(msg, "already revoked") {
		t.Fatalf("expected a second revoke to say so, got %q", msg)
	}

	repo := hubtest.GitRepo(t)
	hubtest.Git(t, repo, "branch", "-m", "main", "trunk")
	ready, _ := wshub(t, env, 0, "admin", "project", "add", "--account", id, "--repository", repo)
	if ready["state"] != "ready" {
		t.Fatalf("expected the project ready, got %v", ready)
	}
	// A failed add exits non-zero; the project is kept failed, with its reason.
	failed, msg := wshub(t, env, 1, "admin", "project", "add", "--account", id, "--repository", "/nonexistent/repo", "--name", "broken")
	if failed["state"] != "failed" || failed["failureReason"] == "" || !strings.Contains(msg, "could not be mirrored") {
		t.Fatalf("expected failed with a reason on stdout and an error on stderr, got %v, %q", failed, msg)
	}
	// update: each flag given changes its setting, the others stay.
	upd, _ = wshub(t, env, 0, "admin", "project", "update", "--project", ready["projectId"].(string), "--name", "Renamed",
		"--push", "--network", "none")
	if upd["displayName"] != "Renamed" || upd["push"] != true || upd["network"] != "none" || upd["defaultBranch"] != "trunk" {
		t.Fatalf("expected name, push and network changed, the default branch kept, got %v", upd)
	}
	// host: the explicit opt-in for the hub host's network; anything else is refused
	// naming the settings there are.
	if upd, _ := wshub(t, env, 0, "admin", "project", "update", "--project", ready["projectId"].(string), "--network", "host"); upd["network"] != "host" {
		t.Fatalf("expected the network set to host, got %v", upd)
	}
	if _, msg := wshub(t, env, 2, "admin", "project", "update", "--project", ready["projectId"].(string), "--network", "internet"); !strings.Contains(msg, "full, none, host") {
		t.Fatalf("expected an unknown network refused naming full, none and host, got %q", msg)
	}
	if _, msg := wshub(t, env, 2, "admin", "project", "update", "--project", ready["projectId"].(string), "--default-branch", "a..b"); !strings.Contains(msg, "default branch") {
		t.Fatalf("expected a bad default branch refused, got %q", msg)
	}
	// refresh: a ready project is fetched in place; a failed one is tried again.
	if out, _ := wshub(t, env, 0, "admin", "project", "refresh", "--project", ready["projectId"].(string)); out["state"] != "ready" {
		t.Fatalf("expected the ready project refreshed and still ready, got %v", out)
	}
	if out, _ := wshub(t, env, 1, "admin", "project", "refresh", "--project", failed["projectId"].(string)); out["state"] != "failed" {
		t.Fatalf("expected the failed project tried again and still failed, got %v", out)
	}

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"admin", "project", "list", "--account", id}, env, &out, &errb); code != 0 {
		t.Fatalf("project list: exit %d: %s", code, errb.String())
	}
	var list []map[string]any
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) != 2 {
		t.Fatalf("expected two projects as JSON, got %v: %s", err, out.String())
	}
	if list[0]["defaultBranch"] != "trunk" || list[0]["state"] != "ready" {
		t.Fatalf("expected the detected default branch trunk, got %v", list[0])
	}
	if list[1]["state"] != "failed" || list[1]["failureReason"] == nil {
		t.Fatalf("expected the failure reason kept, got %v", list[1])
	}

	// remove: the project leaves the list; removing it again changes nothing.
	removed, _ := wshub(t, env, 0, "admin", "project", "remove", "--project", failed["projectId"].(string))
	if removed["removedAt"] == nil || removed["archivedWorkspaces"] == nil {
		t.Fatalf("expected removedAt and the (empty) archived list, got %v", removed)
	}
	wshub(t, env, 0, "admin", "project", "remove", "--project", failed["projectId"].(string))
	if _, msg := wshub(t, env, 1, "admin", "project", "refresh", "--project", failed["projectId"].(string)); !strings.Contains(msg, "removed") {
		t.Fatalf("expected a removed project refused by refresh, got %q", msg)
	}
	out.Reset()
	if code := run(context.Background(), []string{"admin", "project", "list", "--account", id}, env, &out, &errb); code != 0 ||
		json.Unmarshal(out.Bytes(), &list) != nil || len(list) != 1 {
		t.Fatalf("expected one project listed after the removal, got %d %s", code, out.String())
	}
}

func TestAdminSetsAndClearsAccountQuotas(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	id := acct["accountId"].(string)
	upd, _ := wshub(t, env, 0, "admin", "account", "update", "--account", id, "--max-workspaces", "5", "--max-open-messages", "0",
		"--max-running-turns", "2")
	if upd["maxWorkspaces"] != float64(5) || upd["maxOpenMessages"] != float64(0) || upd["maxRunningTurns"] != float64(2) {
		t.Fatalf("expected the quotas 5, 0 and 2, got %v", upd)
	}
	upd, _ = wshub(t, env, 0, "admin", "account", "update", "--account", id, "--max-workspaces", "-1")
	if _, set := upd["maxWorkspaces"]; set || upd["maxOpenMessages"] != float64(0) {
		t.Fatalf("expected the workspace quota back to the default and the other kept, got %v", upd)
	}
	upd, _ = wshub(t, env, 0, "admin", "account", "update", "--account", id, "--provider", "local")
	if upd["providerId"] != "local" {
		t.Fatalf("expected the account's provider set, got %v", upd)
	}
	if _, out := wshub(t, env, 2, "admin", "account", "update", "--account", id, "--provider", "process"); !strings.Contains(out, "not one of this hub's") {
		t.Fatalf("expected a provider the hub lacks refused, got %q", out)
	}
	if upd, _ = wshub(t, env, 0, "admin", "account", "update", "--account", id, "--provider", "none"); upd["providerId"] != nil {
		t.Fatalf("expected the account's provider cleared, got %v", upd)
	}
	_, out := wshub(t, env, 2, "admin", "account", "update", "--account", id, "--max-workspaces", "-2")
	if !strings.Contains(out, "-1 for the hub's default") {
		t.Fatalf("expected a negative quota refused, got %q", out)
	}
}

func TestAdminErrors(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	cases := []struct {
		args []string
		code int // 2: a command line the command cannot read; 1: a refusal
		want string
	}{
		{[]string{"admin", "account", "create"}, 2, "--name is required"},
		{[]string{"admin", "account", "create", "--name", "x", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"admin", "account", "create", "--name", "x", "--no-such-flag"}, 2, "no-such-flag"},
		{[]string{"admin", "account", "create", "--name", "x", "--billing-period-end", "tomorrow"}, 2, "not an RFC 3339 time"},
		{[]string{"admin", "account", "update", "--account", "acct_nope", "--billing-period-end", "tomorrow"}, 2, "not an RFC 3339 time"},
		{[]string{"admin", "webhook", "deliveries", "--account", "acct_nope", "--limit", "0"}, 2, "must be between 1 and 10000"},
		{[]string{"admin", "account", "update", "--account", "acct_nope", "--entitled"}, 1, "no such account"},
		{[]string{"admin", "key", "create", "--account", "acct_nope", "--name", "k"}, 1, "no such account"},
		{[]string{"admin", "project", "add", "--account", "acct_nope", "--repository", "/tmp"}, 1, "no such account"},
	}
	for _, c := range cases {
		_, msg := wshub(t, env, c.code, c.args...)
		if !strings.Contains(msg, c.want) {
			t.Errorf("wshub %v: expected stderr to contain %q, got %q", c.args, c.want, msg)
		}
	}
	if _, msg := wshub(t, env, 2, "admin"); !strings.Contains(msg, "usage") {
		t.Errorf("expected usage for bare admin, got %q", msg)
	}
}

func TestAdminWorkspaceCommands(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	for _, verb := range []string{"archive", "unarchive", "delete"} {
		if _, msg := wshub(t, env, 1, "admin", "workspace", verb, "--workspace", "ws_0000000000000000"); !strings.Contains(msg, "no such workspace") {
			t.Errorf("workspace %s of an unknown id: expected 'no such workspace', got %q", verb, msg)
		}
	}
	if _, msg := wshub(t, env, 2, "admin", "workspace", "archive"); !strings.Contains(msg, "--workspace is required") {
		t.Errorf("expected --workspace to be required, got %q", msg)
	}
}

func TestAdminListsAccountsAndKeys(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Listed", "--entitled")
	id := acct["accountId"].(string)
	key, _ := wshub(t, env, 0, "admin", "key", "create", "--account", id, "--name", "ci")
	wshub(t, env, 0, "admin", "key", "create", "--account", id, "--name", "laptop")
	wshub(t, env, 0, "admin", "key", "revoke", "--key-id", key["keyId"].(string))
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"admin", "key", "list", "--account", id}, env, &out, &errb); code != 0 {
		t.Fatalf("key list: exit %d: %s", code, errb.String())
	}
	var keys []map[string]any
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil || len(keys) != 2 {
		t.Fatalf("expected two keys listed, got %s (%v)", out.String(), err)
	}
	if keys[0]["name"] != "ci" || keys[0]["revoked"] != true || keys[1]["name"] != "laptop" || keys[1]["revoked"] != false {
		t.Errorf("expected ci (revoked) then laptop, got %v", keys)
	}
	if strings.Contains(out.String(), "svc_") {
		t.Errorf("a key list must never show a key, got %s", out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"admin", "account", "list"}, env, &out, &errb); code != 0 || !strings.Contains(out.String(), id) {
		t.Fatalf("expected account list to show %s, got exit %d: %s", id, code, out.String())
	}
}

func TestAdminHelpAndVersionNeedNoDatabase(t *testing.T) {
	t.Parallel()
	env := testEnviron("DATABASE_URL")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"admin", "--help"}, 0, "account list"},
		{[]string{"admin", "key", "list", "--help"}, 0, "key list --account ID"},
		{[]string{"admin", "no", "such"}, 2, `unknown command "no such"`}, // a usage error, as for wshub itself
		{[]string{"version"}, 0, "wshub "},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tt.args, env, &out, &errb)
		if code != tt.code || !strings.Contains(out.String()+errb.String(), tt.want) {
			t.Errorf("wshub %v: expected exit %d with %q, got %d: %s%s", tt.args, tt.code, tt.want, code, out.String(), errb.String())
		}
	}
}

func TestAdminSlackBind(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	id := acct["accountId"].(string)
	out, _ := wshub(t, env, 0, "admin", "slack", "bind", "--team", "T0123", "--account", id, "--agent", "agent_2", "--model", "gpt-5",
		"--runtime-mode", "approval-required")
	if out["team"] != "T0123" || out["accountId"] != id || out["agent"] != "agent_2" || out["model"] != "gpt-5" ||
		out["runtimeMode"] != "approval-required" {
		t.Fatalf("expected the binding echoed, got %v", out)
	}
	// A value a flag cannot take is a usage error (2); what names nothing the hub has,
	// a refusal (1).
	for name, tt := range map[string]struct {
		code int
		args []string
	}{
		"agent without model": {2, []string{"--team", "T0123", "--account", id, "--agent", "agent_2"}},
		"unknown agent":       {2, []string{"--team", "T0123", "--account", id, "--agent", "agent_9", "--model", "m"}},
		"unknown account":     {1, []string{"--team", "T0123", "--account", "acct_nope"}},
		"unknown project":     {1, []string{"--team", "T0123", "--account", id, "--project", "prj_nope"}},
		"unknown mode":        {2, []string{"--team", "T0123", "--account", id, "--runtime-mode", "yolo"}},
	} {
		if _, msg := wshub(t, env, tt.code, append([]string{"admin", "slack", "bind"}, tt.args...)...); msg == "" {
			t.Fatalf("%s: expected an error message", name)
		}
	}
	// A flag the command requires, missing: a usage error.
	if _, msg := wshub(t, env, 2, "admin", "slack", "bind", "--account", id); !strings.Contains(msg, "--team is required") {
		t.Fatalf("expected --team required, got %q", msg)
	}
}

func TestAdminDiscordBind(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	id := acct["accountId"].(string)
	out, _ := wshub(t, env, 0, "admin", "discord", "bind", "--guild", "910000000000000001", "--account", id,
		"--agent", "agent_1", "--model", "m", "--roles", "940000000000000001, 940000000000000002", "--channels", "920000000000000001")
	roles, _ := out["roles"].([]any)
	channels, _ := out["channels"].([]any)
	if out["guild"] != "910000000000000001" || len(roles) != 2 || roles[1] != "940000000000000002" || len(channels) != 1 {
		t.Fatalf("expected the binding with two roles and one channel echoed, got %v", out)
	}
	out, _ = wshub(t, env, 0, "admin", "discord", "bind", "--guild", "910000000000000001", "--account", id)
	if r, _ := out["roles"].([]any); len(r) != 0 {
		t.Fatalf("expected binding again without --roles to lift the limit, got %v", out)
	}
	if _, msg := wshub(t, env, 2, "admin", "discord", "bind", "--account", id); !strings.Contains(msg, "--guild is required") {
		t.Fatalf("expected --guild required, got %q", msg)
	}
}

func TestAdminReseal(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	k1, k2 := env.get("WSHUB_CONTENT_KEY"), hubtest.NewContentKey(t)
	env = env.with("WSHUB_CONTENT_KEYS=" + k2 + "," + k1)
	_, out := wshub(t, env, 1, "admin", "reseal")
	if !strings.Contains(out, "is not the first of WSHUB_CONTENT_KEYS") || strings.Contains(out, k1) || strings.Contains(out, k2) {
		t.Fatalf("expected a mismatch between the two settings refused without echoing keys, got %q", out)
	}
	env = env.with("WSHUB_CONTENT_KEY=")
	wshub(t, env, 2, "admin", "reseal", "--batch", "0")
	res, out := wshub(t, env, 0, "admin", "reseal", "--batch", "1")
	kinds, _ := res["kinds"].([]any)
	if id, _ := res["keyId"].(string); len(id) != 8 || len(kinds) != len(core.SealedKinds) || !strings.Contains(out, "message_text") {
		t.Fatalf("expected the current key id and one report per kind, got %v / %s", res, out)
	}
}

// Reseal does not report success it did not have: run against another data directory
// than the hub's, an attachment's missing bytes are a failure (exit 1, named), and a
// data directory that does not exist is refused, not made.
func TestAdminResealCountsMissingBytesAsFailures(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t)
	r := h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m"}).Expect(t, 201, "")
	ws := r.Body["workspace"].(map[string]any)["workspaceId"].(string)
	h.Call("POST", "/v1/api/workspaces/"+ws+"/attachments", h.Key, []byte("notes"),
		"Content-Type", "text/plain", "X-Service-File-Name", "notes.txt").Expect(t, 201, "")
	missing := filepath.Join(t.TempDir(), "nothing-here")
	env := hubEnv(h, "WSHUB_DATA_DIR="+missing)
	if _, out := wshub(t, env, 1, "admin", "reseal"); !strings.Contains(out, "does not exist") {
		t.Fatalf("expected a missing data directory refused, got %q", out)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("expected reseal not to make the data directory")
	}
	env = env.with("WSHUB_DATA_DIR=" + t.TempDir()) // exists, but is not the hub's
	_, out := wshub(t, env, 1, "admin", "reseal")
	if !strings.Contains(out, "failed 1") || !strings.Contains(out, "not in the blob store") {
		t.Fatalf("expected the attachment whose bytes are missing counted and named as a failure, got %q", out)
	}
	env = env.with("WSHUB_DATA_DIR=" + h.Config.DataDir) // the hub's: every value is current
	if _, out := wshub(t, env, 0, "admin", "reseal"); strings.Contains(out, "failed 1") {
		t.Fatalf("expected no failure with the hub's data directory, got %q", out)
	}
}

// The operator names an account's people: one identity each, a role, and a member
// known to the hub keeps their id across accounts and role changes.
func TestAdminMembersAreNamedByOneIdentityWithARole(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "People")
	id := acct["accountId"].(string)
	other, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Other")

	owner, _ := wshub(t, env, 0, "admin", "member", "add", "--account", id, "--email", " Ada@Example.COM ", "--role", "owner", "--name", "Ada")
	if owner["role"] != "owner" || owner["name"] != "Ada" || !strings.HasPrefix(owner["memberId"].(string), "mem_") {
		t.Fatalf("expected Ada added as owner, got %v", owner)
	}
	if ids := owner["identities"].([]any); len(ids) != 1 || ids[0] != "email:ada@example.com" {
		t.Errorf("expected the email lowercased and trimmed, got %v", ids)
	}
	wshub(t, env, 0, "admin", "member", "add", "--account", id, "--slack", "T01:U02", "--role", "member")
	wshub(t, env, 0, "admin", "member", "add", "--account", id, "--oidc", "https://id.example.com/:sub-9", "--role", "member")
	// The same person again, in another account and with another role here: one member.
	again, _ := wshub(t, env, 0, "admin", "member", "add", "--account", other["accountId"].(string), "--email", "ada@example.com", "--role", "member")
	if again["memberId"] != owner["memberId"] {
		t.Errorf("expected the same member in the second account, got %v and %v", owner["memberId"], again["memberId"])
	}

	// A forge login linked to Ada: its profile page, lowercased; another's is refused.
	linked, _ := wshub(t, env, 0, "admin", "member", "link", "--account", id, "--email", "ada@example.com", "--forge", "github", "--login", "AdaL")
	if ids := linked["identities"].([]any); len(ids) != 2 || ids[1] != "github:https://github.com/adal" {
		t.Errorf("expected Ada's GitHub profile linked, got %v", ids)
	}
	if _, errs := wshub(t, env, 2, "admin", "member", "link", "--account", id, "--slack", "T01:U02", "--forge", "github", "--login", "adal"); !strings.Contains(errs, "another member's identity") {
		t.Errorf("expected a login linked to another member refused, got %q", errs)
	}
	if _, errs := wshub(t, env, 2, "admin", "member", "link", "--account", id, "--email", "ada@example.com", "--forge", "gitea", "--login", "ada"); !strings.Contains(errs, "needs --forge-url") {
		t.Errorf("expected a Gitea login without the forge's address refused, got %q", errs)
	}

	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"admin", "member", "list", "--account", id}, env, &out, &errb); code != 0 {
		t.Fatalf("member list: exit %d: %s", code, errb.String())
	}
	var list []map[string]any
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) != 3 {
		t.Fatalf("expected three members, got %s (%v)", out.String(), err)
	}
	if list[0]["name"] != "Ada" || list[0]["role"] != "owner" || list[2]["identities"].([]any)[0] != "oidc:https://id.example.com sub-9" {
		t.Errorf("expected the owner first and the OpenID identity as issuer and subject, got %v", list)
	}

	wshub(t, env, 0, "admin", "member", "remove", "--account", id, "--slack", "T01:U02")
	_, errs := wshub(t, env, 1, "admin", "member", "remove", "--account", id, "--slack", "T01:U02")
	if !strings.Contains(errs, "is not a member of account") {
		t.Errorf("expected removing twice to say so, got %q", errs)
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--account", id, "--role", "owner"}, 2, "give exactly one of --email"},
		{[]string{"--account", id, "--role", "owner", "--email", "a@b.c", "--discord", "1"}, 2, "give exactly one of"},
		{[]string{"--account", id, "--role", "boss", "--email", "a@b.c"}, 2, `role must be "owner" or "member"`},
		{[]string{"--account", id, "--role", "owner", "--slack", "nope"}, 2, "a Slack identity is TEAM:USER"},
		{[]string{"--account", id, "--role", "owner", "--oidc", "not-a-url"}, 2, "ISSUER:SUBJECT"},
		{[]string{"--account", "acct_missing", "--role", "owner", "--discord", "12"}, 1, "no account acct_missing"},
	} {
		_, errs := wshub(t, env, tt.code, append([]string{"admin", "member", "add"}, tt.args...)...)
		if !strings.Contains(errs, tt.want) {
			t.Errorf("member add %v: expected %q, got %q", tt.args, tt.want, errs)
		}
	}
}

// The operator sees what each attempt of a delivery did: the list and redeliver print
// the delivery's attempts (attemptLog) beside its summary, a refused attempt with its
// status code, error and the start of the answer.
func TestAdminWebhookDeliveriesShowEachAttempt(t *testing.T) {
	t.Parallel()
	h, rc := refusingOnceHub(t)
	h.Call("POST", "/v1/api/webhooks", h.Key, map[string]any{"url": rc.URL}).Expect(t, 201, "")
	h.Call("POST", "/v1/api/workspaces", h.Key, map[string]any{"agent": "agent_1", "model": "m", "prompt": "write ci"}).Expect(t, 201, "")
	env := hubEnv(h)

	type attempt struct {
		Attempt         int    `json:"attempt"`
		DurationMS      *int64 `json:"durationMs"`
		Error           string `json:"error"`
		ResponseExcerpt string `json:"responseExcerpt"`
		StartedAt       string `json:"startedAt"`
		StatusCode      int    `json:"statusCode"`
	}
	type delivery struct {
		AttemptLog []attempt `json:"attemptLog"`
		Attempts   int       `json:"attempts"`
		DeliveryID string    `json:"deliveryId"`
		Status     string    `json:"status"`
	}
	// made lists the account's deliveries until its one delivery has made n attempts.
	made := func(n int) delivery {
		t.Helper()
		return eventually.Value(t, 30*time.Second, fmt.Sprintf("one delivery with %d attempts", n), func() (delivery, error) {
			_, out := wshub(t, env, 0, "admin", "webhook", "deliveries", "--account", h.Account.ID)
			var ds []delivery
			if err := json.Unmarshal([]byte(out), &ds); err != nil {
				t.Fatalf("expected the deliveries as JSON, got %q: %v", out, err)
			}
			if len(ds) == 1 && ds[0].Attempts >= n {
				return ds[0], nil
			}
			return delivery{}, fmt.Errorf("got %+v", ds)
		})
	}
	d := made(1)
	if a := d.AttemptLog; d.Status != "pending" || len(a) != 1 || a[0].Attempt != 1 || a[0].StatusCode != 503 || a[0].Error != "HTTP 503" ||
		a[0].ResponseExcerpt != "down for maintenance" || a[0].DurationMS == nil {
		t.Fatalf("expected the refused first attempt with its status, error and answer, got %+v", d)
	}
	if _, err := time.Parse(time.RFC3339Nano, d.AttemptLog[0].StartedAt); err != nil {
		t.Fatalf("expected the attempt's start as RFC 3339, got %q", d.AttemptLog[0].StartedAt)
	}
	again, _ := wshub(t, env, 0, "admin", "webhook", "redeliver", "--delivery", d.DeliveryID)
	if log, _ := again["attemptLog"].([]any); again["status"] != "pending" || len(log) != 1 {
		t.Fatalf("expected redeliver to print the delivery pending with its attempt, got %v", again)
	}
	d = made(2)
	if a := d.AttemptLog; d.Status != "delivered" || len(a) != 2 || a[1].Attempt != 2 || a[1].StatusCode != 204 || a[1].Error != "" {
		t.Fatalf("expected the second attempt acknowledged in the log, got %+v", d)
	}
}
