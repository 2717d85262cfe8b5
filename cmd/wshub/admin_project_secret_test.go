package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wshub/wshub/hub/hubtest"
)

// A project's secrets from the operator's command line: set from a file or standard
// input, replaced, listed by name (never a value), removed; what cannot be a secret is
// refused in words, without echoing the value; the values are stored sealed and the
// changes audited.
func TestAdminProjectSecretsSetListRemove(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team", "--entitled")
	project, _ := wshub(t, env, 0, "admin", "project", "add", "--account", acct["accountId"].(string), "--repository", hubtest.GitRepo(t))
	pid := project["projectId"].(string)
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const npm, db = "npm_s3cr3t_from_a_file", "postgres://u:p4ss@db.internal/test"
	set, out := wshub(t, env, 0, "admin", "project", "secret", "set", "--project", pid, "--name", "NPM_TOKEN", "--value-file", file("npm", npm+"\n"))
	if set["name"] != "NPM_TOKEN" || set["agent"] != false || set["projectId"] != pid || strings.Contains(out, npm) {
		t.Fatalf("expected the secret set and shown without its value, got %v %q", set, out)
	}
	// Standard input, for the agent too.
	stdin, err := os.Open(file("db", db))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	withStdin := env
	withStdin.stdin = stdin
	set, _ = wshub(t, withStdin, 0, "admin", "project", "secret", "set", "--project", pid, "--name", "TEST_DATABASE_URL", "--value-file", "-", "--agent")
	if set["agent"] != true {
		t.Fatalf("expected the stdin secret set for the agent, got %v", set)
	}
	// Set again: replaced, not added.
	wshub(t, env, 0, "admin", "project", "secret", "set", "--project", pid, "--name", "NPM_TOKEN", "--value-file", file("npm2", npm+"-2"), "--agent")

	list := func() []secretOut {
		t.Helper()
		_, out := wshub(t, env, 0, "admin", "project", "secret", "list", "--project", pid)
		if strings.Contains(out, npm) || strings.Contains(out, db) || strings.Contains(out, "p4ss") {
			t.Fatalf("expected the list never to show a value, got %s", out)
		}
		var got []secretOut
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("list: %v: %s", err, out)
		}
		return got
	}
	if got := list(); len(got) != 2 || got[0].Name != "NPM_TOKEN" || !got[0].Agent || got[1].Name != "TEST_DATABASE_URL" ||
		!got[1].Agent || got[0].CreatedAt == "" || got[0].UpdatedAt == "" {
		t.Fatalf("expected NPM_TOKEN (replaced, now for the agent) and TEST_DATABASE_URL in name order, got %+v", got)
	}

	long := strings.Repeat("A", 101)
	for _, c := range []struct {
		name, value string
		code        int
		want        string
	}{
		{"1NPM", "long enough", 2, "not a variable name"},
		{"NPM-TOKEN", "long enough", 2, "not a variable name"},
		{"PATH", "long enough", 2, "may not be named PATH"},
		{"wshub_token", "long enough", 2, "may not be named wshub_token"},
		{long, "long enough", 2, "at most 100 characters"},
		{"SHORT", "ab\n", 2, "at least 4 bytes"},
		{"NUL", "nul\x00secret", 2, "NUL"},
		{"BINARY", "\xff\xfebinary", 2, "not valid UTF-8"},
		{"HUGE", strings.Repeat("x", 32<<10+1), 2, "at most 32 KiB"},
	} {
		_, out := wshub(t, env, c.code, "admin", "project", "secret", "set", "--project", pid, "--name", c.name, "--value-file", file("bad", c.value))
		if !strings.Contains(out, c.want) || (len(c.value) > 4 && strings.Contains(out, c.value)) {
			t.Errorf("set %s: expected %q in words, without the value, got %q", c.name, c.want, out)
		}
	}
	if _, out := wshub(t, env, 1, "admin", "project", "secret", "set", "--project", "prj_nope", "--name", "X", "--value-file", file("x", "value")); !strings.Contains(out, "no such project") {
		t.Errorf("expected an unknown project refused, got %q", out)
	}
	if _, out := wshub(t, env, 1, "admin", "project", "secret", "set", "--project", pid, "--name", "X", "--value-file", filepath.Join(dir, "missing")); !strings.Contains(out, "no such file") {
		t.Errorf("expected a missing file refused, got %q", out)
	}

	removed, _ := wshub(t, env, 0, "admin", "project", "secret", "remove", "--project", pid, "--name", "NPM_TOKEN")
	if removed["removed"] != true {
		t.Fatalf("expected removed, got %v", removed)
	}
	if _, out := wshub(t, env, 1, "admin", "project", "secret", "remove", "--project", pid, "--name", "NPM_TOKEN"); !strings.Contains(out, `has no secret "NPM_TOKEN"`) {
		t.Errorf("expected a second remove refused, got %q", out)
	}
	if got := list(); len(got) != 1 || got[0].Name != "TEST_DATABASE_URL" {
		t.Fatalf("expected only TEST_DATABASE_URL left, got %+v", got)
	}

	conn, err := sql.Open("postgres", env.get("DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var sealed []byte
	if err := conn.QueryRow(`SELECT value_sealed FROM project_secrets WHERE name = 'TEST_DATABASE_URL'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("p4ss")) {
		t.Fatal("expected the value sealed at rest")
	}
	var audited string
	if err := conn.QueryRow(`SELECT string_agg(action || ' ' || detail, ', ' ORDER BY id) FROM audit_log WHERE target = $1`, pid).Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if want := "project.secret_set NPM_TOKEN, project.secret_set TEST_DATABASE_URL (given to the agent), " +
		"project.secret_set NPM_TOKEN (given to the agent), project.secret_removed NPM_TOKEN"; audited != want {
		t.Fatalf("expected the audit log\n%s\ngot\n%s", want, audited)
	}
}
