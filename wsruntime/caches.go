package wsruntime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/wshub/wshub/adapters/machines"
	"github.com/wshub/wshub/api/runtimewire"
	"github.com/wshub/wshub/core"
)

// The environment's caches on this machine, as the hub's local provider keeps them
// (core/env_cache.go): those the hub says are saved are restored before the setup,
// the others saved after a setup that succeeded, and never anything after a turn.
// Each line of what happened goes into the setup's output.

// restoreCaches downloads and restores the caches sc says to restore. One that cannot
// be restored is a miss: the setup fills its paths.
func (r *Runtime) restoreCaches(ctx context.Context, sc *runtimewire.Script, say func(string)) {
	for i, c := range sc.Caches {
		if c.Save {
			say(fmt.Sprintf("cache %s: none saved for key %s; setup fills it", c.Name, c.Key))
		}
		if !c.Restore || ctx.Err() != nil {
			continue
		}
		start := time.Now()
		st, err := r.restoreCache(ctx, sc, i, c)
		if err != nil {
			r.log.Warn("cache not restored", "cache", c.Name, "err", err)
			say(fmt.Sprintf("cache %s: the cache saved from %s could not be restored (%v); setup runs without it", c.Name, c.Scope, err))
			continue
		}
		for _, sk := range st.Skipped {
			say(fmt.Sprintf("cache %s: %s already exists in the workspace; kept as it is", c.Name, sk))
		}
		say(fmt.Sprintf("cache %s: restored %d files (%d bytes) from %s in %s", c.Name, st.Files, st.Bytes, c.Scope,
			time.Since(start).Round(time.Millisecond)))
	}
}

func (r *Runtime) restoreCache(ctx context.Context, sc *runtimewire.Script, i int, c runtimewire.ScriptCache) (core.CacheStats, error) {
	resp, err := r.hub.do(ctx, request{method: "GET", path: "/scripts/" + sc.RunID + "/caches/" + strconv.Itoa(i)})
	if err != nil {
		return core.CacheStats{}, err
	}
	defer resp.Body.Close()
	return machines.UnpackCacheIn(ctx, r.cfg.Dir, c.Paths, resp.Body, core.CacheLimitsOf(sc.CacheMaxBytes))
}

// saveCaches packs and uploads, in parts, the caches sc says to save. One that cannot
// be saved is said and logged, never a failure of the setup.
func (r *Runtime) saveCaches(ctx context.Context, sc *runtimewire.Script, say func(string)) {
	for i, c := range sc.Caches {
		if !c.Save || ctx.Err() != nil || sc.CacheMaxBytes <= 0 {
			continue
		}
		start := time.Now()
		pack, err := machines.PackCacheIn(ctx, r.cfg.Dir, c.Paths, core.CacheLimitsOf(sc.CacheMaxBytes))
		if err != nil {
			say(fmt.Sprintf("cache %s: not saved: %v", c.Name, err))
			continue
		}
		saved, err := r.uploadCache(ctx, sc, i, pack)
		pack.Archive.Close()
		switch {
		case pack.Entries == 0:
			say(fmt.Sprintf("cache %s: not saved: none of its paths exists after setup", c.Name))
		case err != nil:
			r.log.Warn("cache not saved", "cache", c.Name, "err", err)
			say(fmt.Sprintf("cache %s: not saved: %v", c.Name, err))
		case !saved:
			say(fmt.Sprintf("cache %s: already saved by another workspace", c.Name))
		default:
			say(fmt.Sprintf("cache %s: saved %d files (%d bytes, %d stored) for %s in %s", c.Name, pack.Files, pack.Bytes,
				pack.Size, c.Scope, time.Since(start).Round(time.Millisecond)))
		}
	}
}

// uploadCache sends an archive in parts of runtimewire.CachePartBytes, each retried
// by the client, then says it is whole.
func (r *Runtime) uploadCache(ctx context.Context, sc *runtimewire.Script, i int, pack *core.CachePack) (bool, error) {
	if pack.Entries == 0 {
		return false, nil
	}
	if pack.Size > sc.CacheMaxBytes {
		return false, fmt.Errorf("its archive is %d bytes, more than the %d the hub keeps for a project", pack.Size, sc.CacheMaxBytes)
	}
	base := "/scripts/" + sc.RunID + "/caches/" + strconv.Itoa(i)
	buf := make([]byte, runtimewire.CachePartBytes)
	parts := 0
	for {
		n, err := io.ReadFull(pack.Archive, buf)
		if n > 0 {
			part := request{method: "PUT", path: base + "/parts/" + strconv.Itoa(parts), body: bytes.NewReader(buf[:n]),
				contentType: "application/octet-stream"}
			if _, err := r.hub.call(ctx, part, nil); err != nil {
				return false, err
			}
			parts++
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return false, err
		}
	}
	var rec runtimewire.CacheRecorded
	_, err := r.hub.call(ctx, request{method: "POST", path: base, json: runtimewire.CacheSaved{Parts: parts, Bytes: pack.Size, Files: pack.Files}}, &rec)
	return rec.Saved, err
}
