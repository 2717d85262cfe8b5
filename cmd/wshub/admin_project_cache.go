package main

// wshub admin project cache list|drop: the saved caches of a project's environment.

import (
	"context"
	"flag"
	"time"

	"github.com/wshub/wshub/core"
)

// cacheKeyShown is how much of a cache's key list shows: enough to name it to drop.
const cacheKeyShown = 16

func projectCacheList(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	return func(ctx context.Context, h adminHub) (any, error) {
		list, err := h.svc.Caches.List(ctx, *id)
		if err != nil {
			return nil, err
		}
		return cachesOf(list), nil
	}
}

func projectCacheDrop(fs *flag.FlagSet) adminRun {
	id := fs.String("project", "", "project id")
	key := fs.String("key", "", "the start of the key of the caches to drop, as cache list shows it")
	fs.Bool("all", false, "drop every cache of the project")
	return func(ctx context.Context, h adminHub) (any, error) {
		dropped, err := h.svc.Caches.Drop(ctx, *id, *key)
		if err != nil {
			return nil, err
		}
		return cachesDropped{Dropped: cachesOf(dropped)}, nil
	}
}

// cacheOut is a saved cache as the operator sees it.
type cacheOut struct {
	Bytes      int64     `json:"bytes"`
	CreatedAt  time.Time `json:"createdAt"`
	Files      int       `json:"files"`
	Key        string    `json:"key"`
	LastUsedAt time.Time `json:"lastUsedAt"`
	Scope      string    `json:"scope"`
}

type cachesDropped struct {
	Dropped []cacheOut `json:"dropped"`
}

func cachesOf(list []core.ProjectCache) []cacheOut {
	out := make([]cacheOut, len(list))
	for i, c := range list {
		out[i] = cacheOut{Bytes: c.Bytes, CreatedAt: c.CreatedAt.UTC(), Files: c.Files, Key: c.Key[:min(len(c.Key), cacheKeyShown)],
			LastUsedAt: c.LastUsedAt.UTC(), Scope: c.Scope}
	}
	return out
}
