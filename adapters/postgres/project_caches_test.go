package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/core"
)

// Two saves of one scope and key (two replicas, two workspaces): the first is kept,
// the second told so without an error. Eviction keeps the most recently used within
// the cap, a lookup counting as a use.
func TestProjectCachesKeepTheFirstSaveAndEvictTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	seedDeliveries(t, store, time.Now(), 0) // an account and project prj_l
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	cache := func(key string, bytes int64, minute int) core.ProjectCache {
		when := at.Add(time.Duration(minute) * time.Minute)
		return core.ProjectCache{ProjectID: "prj_l", Scope: "main", Key: key, BlobKey: "cache_prj_l/" + key,
			Bytes: bytes, Files: 1, CreatedAt: when, LastUsedAt: when}
	}
	for _, c := range []core.ProjectCache{cache("a", 40, 0), cache("b", 40, 1), cache("c", 40, 2)} {
		if ok, err := store.RecordCache(ctx, c); !ok || err != nil {
			t.Fatalf("expected %s recorded, got %v %v", c.Key, ok, err)
		}
	}
	second := cache("a", 99, 3)
	second.BlobKey = "cache_prj_l/a-other"
	if ok, err := store.RecordCache(ctx, second); ok || err != nil {
		t.Fatalf("expected the second save of a refused quietly, got %v %v", ok, err)
	}
	if _, err := store.LookupCache(ctx, "prj_l", "main", "a", at.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := store.LookupCache(ctx, "prj_l", "feature", "a", at); !errors.Is(err, core.ErrNoRows) {
		t.Fatalf("expected no cache of another scope, got %v", err)
	}
	evicted, err := store.EvictCaches(ctx, "prj_l", 80)
	if err != nil || len(evicted) != 1 || evicted[0].Key != "b" {
		t.Fatalf("expected b (used least recently: a was looked up) evicted, got %+v %v", evicted, err)
	}
	list, err := store.ListCaches(ctx, "prj_l")
	if err != nil || len(list) != 2 || list[0].Key != "a" || list[0].BlobKey != "cache_prj_l/a" || list[1].Key != "c" {
		t.Fatalf("expected a (the first save's blob) then c, got %+v %v", list, err)
	}
	if evicted, err := store.EvictCaches(ctx, "prj_l", 80); err != nil || len(evicted) != 0 {
		t.Fatalf("expected nothing more to evict within the cap, got %+v %v", evicted, err)
	}
}
