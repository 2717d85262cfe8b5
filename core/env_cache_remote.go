package core

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Caches of remote machines. The hub plans them when it gives the setup
// (Environment): each cache's key is taken from the key files at the workspace's base
// in git's objects (what the machine's fresh checkout holds), and looked up as the
// local provider does. The machine downloads the caches to restore (CacheArchive),
// runs the setup, and uploads those to save in parts no larger than a request may be
// (CachePart), then says each is complete (CacheSaved). Only a setup run's own caches
// are taken, and only until it ends: nothing after an agent's turn is ever saved.

// CachePartBytes is the most one part of an uploaded archive holds.
const CachePartBytes = 16 << 20

// RuntimeCache is one cache of a remote setup: its paths, and whether the machine
// restores it before the setup (Restore) or saves it after (Save).
type RuntimeCache struct {
	Paths         []string
	Restore, Save bool
	// Name, Scope and Key (its start) say what the setup's output says of it.
	Name, Scope, Key string
}

// remoteCache is what the hub keeps of one cache of a remote setup run.
type remoteCache struct {
	Key   string `json:"key"`
	Scope string `json:"scope"` // the scope it is saved in
	// Hit is the saved cache restored (its blob, parts and scope), nil on a miss.
	Hit *ProjectCache `json:"hit,omitempty"`
}

// planRemoteCaches looks up the environment's caches for a remote setup run.
func (s environments) planRemoteCaches(ctx context.Context, ws *Workspace, p *Project, env *Environment) ([]remoteCache, []RuntimeCache, error) {
	c := s.caches
	if len(env.Cache) == 0 || c == nil || c.maxBytes <= 0 || s.envFiles == nil {
		return nil, nil, nil
	}
	read, write := cacheScopes(ws, p)
	var kept []remoteCache
	var out []RuntimeCache
	for _, spec := range env.Cache {
		key, err := cacheKey(spec, func(name string) (io.ReadCloser, error) {
			data, ok, err := s.envFiles.ReadFileAt(ctx, p, ws.BaseRef, name, maxKeyFileBytes)
			switch {
			case errors.Is(err, ErrFileTooLarge):
				return nil, fmt.Errorf("larger than %s", formatBytes(maxKeyFileBytes))
			case err != nil:
				return nil, err
			case !ok:
				return nil, ErrNoRows
			}
			return io.NopCloser(bytes.NewReader(data)), nil
		})
		if err != nil {
			continue // no key: neither restored nor saved
		}
		rc := remoteCache{Key: key, Scope: write}
		for _, scope := range read {
			saved, err := c.store.LookupCache(ctx, p.ID, scope, key, s.clock.Now())
			if errors.Is(err, ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("look up cache %s: %w", key[:12], err)
			}
			rc.Hit = saved
			break
		}
		kept = append(kept, rc)
		scope := write
		if rc.Hit != nil {
			scope = rc.Hit.Scope
		}
		out = append(out, RuntimeCache{Paths: spec.Paths, Restore: rc.Hit != nil, Save: rc.Hit == nil, Name: cacheName(spec), Scope: scope, Key: key[:12]})
	}
	return kept, out, nil
}

// remoteCacheOf finds cache i of the caller's setup run runID, which must still be
// running: the workspace in setup, and runID its run whose caches the hub planned.
func (r *RuntimeAPI) remoteCacheOf(ctx context.Context, rc RuntimeCaller, runID string, i int) (*Workspace, *Project, *remoteCache, error) {
	ws, p, err := r.caller(ctx, rc, true)
	if err != nil {
		return nil, nil, nil, err
	}
	b, err := r.rt.store.WorkspaceEnvironment(ctx, ws.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	var k keptEnvironment
	if len(b) > 0 {
		if err := json.Unmarshal(b, &k); err != nil {
			return nil, nil, nil, err
		}
	}
	if ws.State != StateSetup || k.CacheRun == "" || k.CacheRun != runID || i < 0 || i >= len(k.Caches) {
		return nil, nil, nil, Errorf(CodeInvalidRequest, "no cache %d of a setup run %q that is running", i, cut(runID, 80))
	}
	return ws, p, &k.Caches[i], nil
}

// CacheArchive opens the archive of cache i of the setup run to restore it; size is
// its length.
func (r *RuntimeAPI) CacheArchive(ctx context.Context, rc RuntimeCaller, runID string, i int) (io.ReadCloser, int64, error) {
	_, _, c, err := r.remoteCacheOf(ctx, rc, runID, i)
	if err != nil {
		return nil, 0, err
	}
	if c.Hit == nil {
		return nil, 0, Errorf(CodeInvalidRequest, "cache %d of this run has nothing to restore", i)
	}
	a, err := openCacheArchive(ctx, r.rt.blobs, c.Hit)
	if err != nil {
		return nil, 0, Errorf(CodeServiceUnavailable, "the cache's archive could not be read")
	}
	return a, c.Hit.Bytes, nil
}

// remotePartKey is where part n of cache i of a run is stored until it is recorded:
// a place of its own per run, so a part sent again replaces itself.
func remotePartKey(p *Project, runID string, c *remoteCache, n int) string {
	scope := sha256.Sum256([]byte(c.Scope))
	return CachePartKey(fmt.Sprintf("cache_%s/%x-%s-%s", p.ID, scope[:6], c.Key[:16], runID), n)
}

// CachePart stores part n (from 0) of the archive of cache i of the setup run.
func (r *RuntimeAPI) CachePart(ctx context.Context, rc RuntimeCaller, runID string, i, n int, data []byte) error {
	_, p, c, err := r.remoteCacheOf(ctx, rc, runID, i)
	if err != nil {
		return err
	}
	envc := r.rt.caches
	switch {
	case c.Hit != nil:
		return Errorf(CodeInvalidRequest, "cache %d of this run was restored; it is not saved again", i)
	case n < 0 || int64(n)*CachePartBytes >= envc.maxBytes:
		return Errorf(CodeInvalidRequest, "part %d is past the %s the hub keeps for a project", n, formatBytes(envc.maxBytes))
	case len(data) == 0 || len(data) > CachePartBytes:
		return Errorf(CodeInvalidRequest, "a part holds 1 to %d bytes", CachePartBytes)
	}
	return r.rt.blobs.Put(ctx, remotePartKey(p, runID, c, n), data)
}

// RuntimeCacheSaved is a remote machine's word that it uploaded a cache whole.
type RuntimeCacheSaved struct {
	Parts int
	Bytes int64
	Files int
}

// CacheSaved records cache i of the setup run, uploaded in parts, as the project's
// cache of its scope and key, and evicts what the project holds past its cap. It
// reports false when another workspace saved that cache first (the parts are dropped).
func (r *RuntimeAPI) CacheSaved(ctx context.Context, rc RuntimeCaller, runID string, i int, in RuntimeCacheSaved) (bool, error) {
	_, p, c, err := r.remoteCacheOf(ctx, rc, runID, i)
	if err != nil {
		return false, err
	}
	envc := r.rt.caches
	switch {
	case c.Hit != nil:
		return false, Errorf(CodeInvalidRequest, "cache %d of this run was restored; it is not saved again", i)
	case in.Parts < 1 || in.Bytes < 1 || in.Files < 0 || in.Bytes > int64(in.Parts)*CachePartBytes ||
		in.Bytes <= int64(in.Parts-1)*CachePartBytes || in.Bytes > envc.maxBytes:
		return false, Errorf(CodeInvalidRequest, "parts, bytes and files do not describe an archive the hub keeps (at most %s)", formatBytes(envc.maxBytes))
	}
	now := r.rt.clock.Now()
	saved := ProjectCache{ProjectID: p.ID, Scope: c.Scope, Key: c.Key, BlobKey: remotePartKey(p, runID, c, 0),
		Bytes: in.Bytes, Files: in.Files, Parts: in.Parts, CreatedAt: now, LastUsedAt: now}
	won, err := envc.store.RecordCache(ctx, saved)
	if err != nil {
		return false, err
	}
	if !won {
		deleteCacheBlobs(context.WithoutCancel(ctx), r.rt.blobs, []ProjectCache{saved}, r.rt.log().Warn)
		return false, nil
	}
	envc.evict(context.WithoutCancel(ctx), p.ID)
	return true, nil
}

// maxBytesOrZero is the cap of a project's caches (0: no caches, or none kept here).
func (s *envCaches) maxBytesOrZero() int64 {
	if s == nil {
		return 0
	}
	return s.maxBytes
}
