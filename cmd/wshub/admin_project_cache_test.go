package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/hub/hubtest"
)

func TestAdminProjectCacheListAndDrop(t *testing.T) {
	t.Parallel()
	env := adminEnv(t)
	acct, _ := wshub(t, env, 0, "admin", "account", "create", "--name", "Team")
	added, _ := wshub(t, env, 0, "admin", "project", "add", "--account", acct["accountId"].(string), "--repository", hubtest.GitRepo(t))
	project := added["projectId"].(string)

	// Two caches as setups save them: a row and an archive in the blob store (file).
	ctx := context.Background()
	store, err := postgres.Open(ctx, env.get("DATABASE_URL"), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	blob := func(key string) string {
		return filepath.Join(env.get("WSHUB_DATA_DIR"), "assets", filepath.FromSlash(key))
	}
	record := func(c core.ProjectCache, used time.Time) {
		c.ProjectID, c.BlobKey = project, "cache_"+project+"/"+c.Key[:16]
		c.CreatedAt, c.LastUsedAt = at, used
		if ok, err := store.RecordCache(ctx, c); err != nil || !ok {
			t.Fatalf("record cache: %v %v", ok, err)
		}
		if err := os.MkdirAll(filepath.Dir(blob(c.BlobKey)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(blob(c.BlobKey), []byte("archive"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	record(core.ProjectCache{Scope: "main", Key: "aaaa" + strings.Repeat("0", 60), Bytes: 100, Files: 3}, at)
	record(core.ProjectCache{Scope: "feature", Key: "bbbb" + strings.Repeat("0", 60), Bytes: 200, Files: 5}, at.Add(time.Minute))

	_, out := wshub(t, env, 0, "admin", "project", "cache", "list", "--project", project)
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("expected a JSON list, got %q", out)
	}
	if len(list) != 2 || list[0]["scope"] != "feature" || list[0]["key"] != "bbbb000000000000" || list[0]["bytes"] != 200.0 ||
		list[0]["files"] != 5.0 || list[0]["lastUsedAt"] != "2026-11-28T12:01:00Z" || list[1]["scope"] != "main" {
		t.Fatalf("expected feature's cache (used last) then main's, with scope, key prefix, bytes, files, last used; got %s", out)
	}

	dropped, _ := wshub(t, env, 0, "admin", "project", "cache", "drop", "--project", project, "--key", "AAAA")
	if d, _ := dropped["dropped"].([]any); len(d) != 1 || d[0].(map[string]any)["scope"] != "main" {
		t.Fatalf("expected main's cache dropped by its key's start, got %v", dropped)
	}
	if _, err := os.Stat(blob("cache_" + project + "/aaaa000000000000")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("expected the dropped cache's archive deleted, got %v", err)
	}
	if _, err := os.Stat(blob("cache_" + project + "/bbbb000000000000")); err != nil {
		t.Errorf("expected the other cache's archive kept, got %v", err)
	}
	dropped, _ = wshub(t, env, 0, "admin", "project", "cache", "drop", "--project", project, "--all")
	if d, _ := dropped["dropped"].([]any); len(d) != 1 {
		t.Fatalf("expected the last cache dropped, got %v", dropped)
	}
	if _, out := wshub(t, env, 0, "admin", "project", "cache", "list", "--project", project); strings.TrimSpace(out) != "[]" {
		t.Fatalf("expected no cache left, got %q", out)
	}
	// A removed project's caches go with it, archives and all.
	record(core.ProjectCache{Scope: "main", Key: "cccc" + strings.Repeat("0", 60), Bytes: 1, Files: 1}, at)
	wshub(t, env, 0, "admin", "project", "remove", "--project", project)
	if _, err := os.Stat(blob("cache_" + project + "/cccc000000000000")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("expected a removed project's cache archive deleted, got %v", err)
	}

	for _, tt := range []struct {
		code int
		args []string
		want string
	}{
		{2, []string{"--project", project}, "give exactly one of --key, --all"},
		{2, []string{"--project", project, "--key", "aa", "--all"}, "give exactly one of --key, --all"},
		{2, []string{"--project", project, "--key", "xyz"}, "hexadecimal"},
		{1, []string{"--project", "prj_0000000000000000", "--all"}, "no such project"},
	} {
		if _, msg := wshub(t, env, tt.code, append([]string{"admin", "project", "cache", "drop"}, tt.args...)...); !strings.Contains(msg, tt.want) {
			t.Errorf("cache drop %v: expected %q, got %q", tt.args, tt.want, msg)
		}
	}
}
