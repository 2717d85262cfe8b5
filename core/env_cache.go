package core

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Environment caches: each entry of an environment's cache list is one cache, saved to
// the blob store after a successful setup and before any turn, and restored into the
// next workspace with the same key before its setup runs. Only setup writes them, never
// anything after an agent's turn, so an agent cannot poison the next workspace.
//
// The key is the hash of the entry's paths and of its key files (lockfiles) as the
// fresh checkout holds them, taken before setup runs: what setup changes (npm install
// rewriting package-lock.json) does not move the key it saves under.
//
// Scopes are GitHub Actions': a workspace on the project's default branch reads and
// writes the default branch's caches; one on another base reads its own base's first,
// then the default branch's, and writes its own base's only. An exact hit is not saved
// again (as actions/cache does), so a branch never copies main's cache to itself.

// ProjectCache is one saved cache of a project (a row of project_caches).
type ProjectCache struct {
	ProjectID string
	// Scope is the base whose workspaces may read it; Key the hash of its entry.
	Scope, Key string
	// BlobKey names the archive in the BlobStore; Bytes is its size there.
	BlobKey string
	Bytes   int64
	// Files are the files and symbolic links it holds.
	Files int
	// Parts are the blobs the archive is stored in, in order (CachePartKey); a remote
	// runtime uploads it in parts, a hub's own save is one.
	Parts      int
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// CacheQueries are the store statements of saved caches (table project_caches).
type CacheQueries interface {
	// LookupCache reads the project's cache of scope and key and records it used at
	// at; ErrNoRows when there is none.
	LookupCache(ctx context.Context, projectID, scope, key string, at time.Time) (*ProjectCache, error)
	// RecordCache records a saved cache; false when one of that scope and key is
	// already there (another workspace or replica saved it first: c's blob is unused).
	RecordCache(ctx context.Context, c ProjectCache) (bool, error)
	// EvictCaches forgets the project's least recently used caches until the others
	// hold at most maxBytes, and returns those it forgot (their blobs are the
	// caller's to delete).
	EvictCaches(ctx context.Context, projectID string, maxBytes int64) ([]ProjectCache, error)
	// ListCaches lists the project's caches, the most recently used first.
	ListCaches(ctx context.Context, projectID string) ([]ProjectCache, error)
	// DropCaches forgets the project's caches whose key starts with keyPrefix (""
	// every one) and returns them.
	DropCaches(ctx context.Context, projectID, keyPrefix string) ([]ProjectCache, error)
	// ForgetCache forgets c if its scope and key still name c's blob (not a save
	// made since); false when they do not.
	ForgetCache(ctx context.Context, c ProjectCache) (bool, error)
}

// CacheFiles reads and writes the cached paths of a workspace's machine. Paths are
// an entry's paths as Validate cleaned them: relative to the checkout, or to the
// workspace's home when they start with "~/".
type CacheFiles interface {
	// OpenKeyFile opens a file of the checkout (a key file) without following a
	// symbolic link; ErrNoRows when there is no such regular file.
	OpenKeyFile(ws *Workspace, name string) (io.ReadCloser, error)
	// PackCache archives paths as they are now (a missing one is left out), within
	// limits; symbolic links are kept as links, never followed.
	PackCache(ctx context.Context, ws *Workspace, paths []string, limits CacheLimits) (*CachePack, error)
	// UnpackCache extracts an archive PackCache made into the workspace, each path
	// only where nothing is yet. The archive is untrusted input: an entry outside
	// paths, or not a file, directory or symbolic link, one that would be written
	// through a symbolic link, or more than limits allow refuses the whole archive, and
	// nothing of it is left. The error's text names no host path.
	UnpackCache(ctx context.Context, ws *Workspace, paths []string, r io.Reader, limits CacheLimits) (CacheStats, error)
}

// CacheLimits bound what one cache archive holds once extracted.
type CacheLimits struct {
	MaxBytes   int64 // the files' bytes
	MaxEntries int   // files, directories and links
	// MaxArchiveBytes bounds the archive PackCache writes (0: none): one larger than
	// the project's whole cap is not worth writing to the end.
	MaxArchiveBytes int64
}

// CacheStats counts a cache's content.
type CacheStats struct {
	Files   int   // files and symbolic links
	Entries int   // and directories
	Bytes   int64 // the files' bytes
	// Skipped are the paths not restored because the workspace already held them.
	Skipped []string
}

// CachePack is an archive PackCache made: Size bytes to read from Archive, whose
// Close removes it.
type CachePack struct {
	CacheStats
	Archive io.ReadCloser
	Size    int64
}

// Bounds of one cache, whatever WSHUB_CACHE_MAX_BYTES: a cache is for dependencies,
// and its archive is untrusted when restored.
const (
	maxCacheBytes   = 16 << 30
	maxCacheEntries = 1_000_000
	// maxKeyFileBytes bounds a key file read; a larger one keys no cache.
	maxKeyFileBytes = 64 << 20
	// cacheKeyVersion changes every key when what an archive holds changes form.
	cacheKeyVersion = "wshub cache 1"
)

// cacheLimits are the bounds of an archive packed or restored.
var cacheLimits = CacheLimits{MaxBytes: maxCacheBytes, MaxEntries: maxCacheEntries}

// CacheLimitsOf are the bounds a remote machine packs and restores archives within:
// the hub's, with archives of at most maxArchive bytes.
func CacheLimitsOf(maxArchive int64) CacheLimits {
	l := cacheLimits
	l.MaxArchiveBytes = maxArchive
	return l
}

// cacheRun is one cache of a setup: its key, taken before setup, and whether it was
// restored (then it is not saved again).
type cacheRun struct {
	spec  CacheSpec
	key   string
	scope string // the scope it is saved in
	hit   bool
}

// envCaches save and restore environments' caches: the worker's, at setup, and the
// operator's (Caches).
type envCaches struct {
	kernel
	logger
	store cacheStore
	blobs BlobStore
	files CacheFiles // nil: no caches
	// maxBytes caps each project's caches (0: no caches).
	maxBytes int64
}

// cacheStore is what envCaches read and write.
type cacheStore interface {
	CacheQueries
	projectByID
}

// on reports whether this hub saves and restores caches (nil: it does not).
func (s *envCaches) on() bool { return s != nil && s.files != nil && s.maxBytes > 0 }

// cacheScopes are the scopes ws reads, in order, and the one it writes.
func cacheScopes(ws *Workspace, p *Project) (read []string, write string) {
	def := p.DefaultBranch
	base := cmp.Or(ws.BaseRef, def)
	if base == def {
		return []string{def}, def
	}
	return []string{base, def}, base
}

// cacheName names a cache in what setup says: its paths.
func cacheName(c CacheSpec) string { return strings.Join(c.Paths, ", ") }

// key is the hash of the entry's paths and of its key files in ws's checkout: a
// missing key file hashes as missing, so creating it changes the key.
func (s *envCaches) key(ws *Workspace, c CacheSpec) (string, error) {
	return cacheKey(c, func(name string) (io.ReadCloser, error) { return s.files.OpenKeyFile(ws, name) })
}

// cacheKey hashes the entry's paths and its key files, which open reads (ErrNoRows:
// there is no such file).
func cacheKey(c CacheSpec, open func(name string) (io.ReadCloser, error)) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", cacheKeyVersion)
	for _, p := range c.Paths {
		fmt.Fprintf(h, "path %q\n", p)
	}
	for _, k := range c.KeyFiles {
		r, err := open(k)
		if errors.Is(err, ErrNoRows) {
			fmt.Fprintf(h, "key file %q missing\n", k)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("its key file %s could not be read", k)
		}
		fh := sha256.New()
		n, err := io.Copy(fh, io.LimitReader(r, maxKeyFileBytes+1))
		r.Close()
		switch {
		case err != nil:
			return "", fmt.Errorf("its key file %s could not be read", k)
		case n > maxKeyFileBytes:
			return "", fmt.Errorf("its key file %s is larger than %s", k, formatBytes(maxKeyFileBytes))
		}
		fmt.Fprintf(h, "key file %q %x\n", k, fh.Sum(nil))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// restoreCaches restores the environment's caches saved for ws's project and base,
// telling say what it restored. It keeps each cache's key on env for saveCaches. A
// cache that cannot be restored is a miss, told to say; only the store's failure (the
// claim retries) or the end of ctx is an error.
func (s environments) restoreCaches(ctx context.Context, ws *Workspace, p *Project, env *Environment, say func(string)) error {
	return s.caches.restore(ctx, ws, p, env, say)
}

// saveCaches saves the environment's caches after a successful setup; a cache that
// cannot be saved is told to say and logged, never a failure of the workspace.
func (s environments) saveCaches(ctx context.Context, ws *Workspace, p *Project, env *Environment, say func(string)) {
	s.caches.save(ctx, ws, p, env, say)
}

// restore is restoreCaches.
func (s *envCaches) restore(ctx context.Context, ws *Workspace, p *Project, env *Environment, say func(string)) error {
	env.cacheRuns = nil
	if len(env.Cache) == 0 {
		return nil
	}
	if !s.on() {
		say("caches: off on this hub; setup runs without them")
		return nil
	}
	read, write := cacheScopes(ws, p)
	for _, c := range env.Cache {
		key, err := s.key(ws, c)
		if err != nil {
			say(fmt.Sprintf("cache %s: not used: %v", cacheName(c), err))
			continue
		}
		hit, err := s.restoreOne(ctx, ws, p, c, key, read, say)
		if err != nil {
			return err
		}
		env.cacheRuns = append(env.cacheRuns, cacheRun{spec: c, key: key, scope: write, hit: hit})
	}
	return nil
}

// restoreOne restores the first of the scopes' caches of key that it can.
func (s *envCaches) restoreOne(ctx context.Context, ws *Workspace, p *Project, c CacheSpec, key string, scopes []string, say func(string)) (bool, error) {
	name := cacheName(c)
	tried := false // a saved cache that could not be restored
	for _, scope := range scopes {
		saved, err := s.store.LookupCache(ctx, p.ID, scope, key, s.clock.Now())
		if errors.Is(err, ErrNoRows) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("look up cache %s: %w", key[:12], err)
		}
		start := s.clock.Now()
		tried = true
		st, err := s.unpack(ctx, ws, c, saved)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if err != nil {
			// Evicted or dropped since the lookup, or refused: setup fills the paths.
			// A cache that cannot be restored is forgotten, or it would stand in the
			// way of every save of its key until evicted.
			s.log().Warn("cache not restored", "workspace", ws.ID, "project", p.ID, "blob", saved.BlobKey, "err", err)
			say(fmt.Sprintf("cache %s: the cache saved from %s could not be restored (%v); setup runs without it", name, scope, err))
			if forgot, ferr := s.store.ForgetCache(ctx, *saved); ferr != nil {
				s.log().Warn("unusable cache not forgotten", "blob", saved.BlobKey, "err", ferr)
			} else if forgot {
				deleteCacheBlobs(ctx, s.blobs, []ProjectCache{*saved}, s.log().Warn)
			}
			continue
		}
		for _, sk := range st.Skipped {
			say(fmt.Sprintf("cache %s: %s already exists in the workspace; kept as it is", name, sk))
		}
		say(fmt.Sprintf("cache %s: restored %s files (%s) from %s in %s", name, formatCount(st.Files), formatBytes(st.Bytes), scope,
			s.clock.Now().Sub(start).Round(time.Millisecond)))
		return true, nil
	}
	if tried {
		say(fmt.Sprintf("cache %s: setup fills it", name))
	} else {
		say(fmt.Sprintf("cache %s: none saved for key %s; setup fills it", name, key[:12]))
	}
	return false, nil
}

// unpack reads a saved cache's archive into the workspace.
func (s *envCaches) unpack(ctx context.Context, ws *Workspace, c CacheSpec, saved *ProjectCache) (CacheStats, error) {
	r, err := openCacheArchive(ctx, s.blobs, saved)
	if errors.Is(err, ErrNoRows) {
		return CacheStats{}, errors.New("its archive is gone")
	}
	if err != nil {
		return CacheStats{}, errors.New("its archive could not be read")
	}
	defer r.Close()
	return s.files.UnpackCache(ctx, ws, c.Paths, r, cacheLimits)
}

// save is saveCaches.
func (s *envCaches) save(ctx context.Context, ws *Workspace, p *Project, env *Environment, say func(string)) {
	if !s.on() {
		return
	}
	for _, run := range env.cacheRuns {
		if ctx.Err() != nil {
			return
		}
		if !run.hit {
			s.saveOne(ctx, ws, p, run, say)
		}
	}
}

// saveOne packs one cache, stores its archive and records it; then evicts what the
// project's caches hold over the cap.
func (s *envCaches) saveOne(ctx context.Context, ws *Workspace, p *Project, run cacheRun, say func(string)) {
	name := cacheName(run.spec)
	notSaved := func(why string, err error) {
		if err != nil {
			s.log().Warn("cache not saved", "workspace", ws.ID, "project", p.ID, "err", err)
		}
		say(fmt.Sprintf("cache %s: not saved: %s", name, why))
	}
	start := s.clock.Now()
	limits := cacheLimits
	limits.MaxArchiveBytes = s.maxBytes
	pack, err := s.files.PackCache(ctx, ws, run.spec.Paths, limits)
	if err != nil {
		notSaved(err.Error(), err)
		return
	}
	defer pack.Archive.Close()
	if pack.Entries == 0 {
		notSaved("none of its paths exists after setup", nil)
		return
	}
	if pack.Size > s.maxBytes {
		notSaved(fmt.Sprintf("its archive is %s, more than the %s the hub keeps for a project", formatBytes(pack.Size), formatBytes(s.maxBytes)), nil)
		return
	}
	scope := sha256.Sum256([]byte(run.scope))
	blobKey := fmt.Sprintf("cache_%s/%x-%s-%s", p.ID, scope[:6], run.key[:16], NewID(s.rand, ""))
	if err := s.blobs.PutFrom(ctx, blobKey, pack.Archive, pack.Size); err != nil {
		notSaved("the blob store did not take it", err)
		return
	}
	now := s.clock.Now()
	won, err := s.store.RecordCache(ctx, ProjectCache{ProjectID: p.ID, Scope: run.scope, Key: run.key, BlobKey: blobKey,
		Bytes: pack.Size, Files: pack.Files, CreatedAt: now, LastUsedAt: now})
	if err != nil || !won {
		// The blob is nobody's: delete it even when ctx ended.
		if derr := s.blobs.Delete(context.WithoutCancel(ctx), blobKey); derr != nil {
			s.log().Warn("unused cache blob not deleted", "blob", blobKey, "err", derr)
		}
		if err != nil {
			notSaved("the store did not record it", err)
		} else {
			say(fmt.Sprintf("cache %s: already saved by another workspace", name))
		}
		return
	}
	say(fmt.Sprintf("cache %s: saved %s files (%s, %s stored) for %s in %s", name, formatCount(pack.Files), formatBytes(pack.Bytes),
		formatBytes(pack.Size), run.scope, s.clock.Now().Sub(start).Round(time.Millisecond)))
	s.evict(context.WithoutCancel(ctx), p.ID)
}

// evict forgets the project's least recently used caches over the cap and
// deletes their blobs. A failure leaves the project over its cap until its next save
// (fail open: caches are an optimisation), logged.
func (s *envCaches) evict(ctx context.Context, projectID string) {
	evicted, err := s.store.EvictCaches(ctx, projectID, s.maxBytes)
	if err != nil {
		s.log().Warn("caches not evicted", "project", projectID, "err", err)
	}
	deleteCacheBlobs(ctx, s.blobs, evicted, s.log().Warn)
}

// deleteCacheBlobs deletes forgotten caches' blobs; one that fails is logged and left
// (nothing names it any more).
func deleteCacheBlobs(ctx context.Context, blobs BlobStore, caches []ProjectCache, warn func(string, ...any)) {
	for _, c := range caches {
		for n := range max(c.Parts, 1) {
			if err := blobs.Delete(ctx, CachePartKey(c.BlobKey, n)); err != nil {
				warn("cache blob not deleted", "blob", CachePartKey(c.BlobKey, n), "err", err)
			}
		}
	}
}

// CachePartKey names the n-th part (from 0) of an archive stored under blobKey.
func CachePartKey(blobKey string, n int) string {
	if n == 0 {
		return blobKey
	}
	return blobKey + "-" + strconv.Itoa(n)
}

// openCacheArchive reads a saved cache's archive, its parts one after another.
func openCacheArchive(ctx context.Context, blobs BlobStore, c *ProjectCache) (io.ReadCloser, error) {
	first, err := blobs.Open(ctx, c.BlobKey, 0, -1)
	if err != nil {
		return nil, err
	}
	return &cacheParts{ctx: ctx, blobs: blobs, c: c, cur: first}, nil
}

// cacheParts reads an archive's parts in order, opening each when the one before ends.
type cacheParts struct {
	ctx   context.Context
	blobs BlobStore
	c     *ProjectCache
	n     int
	cur   io.ReadCloser
}

func (p *cacheParts) Read(b []byte) (int, error) {
	for {
		n, err := p.cur.Read(b)
		if err != io.EOF || p.n+1 >= max(p.c.Parts, 1) {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
		p.cur.Close()
		p.n++
		if p.cur, err = p.blobs.Open(p.ctx, CachePartKey(p.c.BlobKey, p.n), 0, -1); err != nil {
			p.cur = io.NopCloser(strings.NewReader(""))
			return 0, err
		}
	}
}

func (p *cacheParts) Close() error { return p.cur.Close() }

// forget drops every cache of a removed project, so that its archives do not stay in
// the blob store (its rows would go with the project's, its blobs not). A failure is
// logged: the project is removed all the same.
func (s *envCaches) forget(ctx context.Context, projectID string) {
	if s == nil {
		return
	}
	dropped, err := s.store.DropCaches(ctx, projectID, "")
	if err != nil {
		s.log().Warn("caches of a removed project not dropped", "project", projectID, "err", err)
	}
	deleteCacheBlobs(ctx, s.blobs, dropped, s.log().Warn)
}

// Caches are the operator's commands on projects' saved caches.
type Caches struct{ c *envCaches }

// List lists a project's saved caches, the most recently used first.
func (s *Caches) List(ctx context.Context, projectID string) ([]ProjectCache, error) {
	if _, err := liveProjectByID(ctx, s.c.store, projectID); err != nil {
		return nil, err
	}
	return s.c.store.ListCaches(ctx, projectID)
}

// Drop forgets a project's caches whose key starts with keyPrefix ("" every one),
// deletes their blobs and returns them. The next workspace of each key fills it again.
func (s *Caches) Drop(ctx context.Context, projectID, keyPrefix string) ([]ProjectCache, error) {
	if keyPrefix != "" {
		if _, err := hex.DecodeString(keyPrefix + strings.Repeat("0", len(keyPrefix)%2)); err != nil || len(keyPrefix) > sha256.Size*2 {
			return nil, Errorf(CodeInvalidRequest, "key must be the start of a cache's key (hexadecimal, as cache list shows it)")
		}
	}
	if _, err := liveProjectByID(ctx, s.c.store, projectID); err != nil {
		return nil, err
	}
	dropped, err := s.c.store.DropCaches(ctx, projectID, strings.ToLower(keyPrefix))
	if err != nil {
		return nil, err
	}
	deleteCacheBlobs(ctx, s.c.blobs, dropped, s.c.log().Warn)
	return dropped, nil
}

// formatCount writes n with thousands separators: 12,345.
func formatCount(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatBytes writes a size in the largest binary unit that keeps it at least 1.
func formatBytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}
