package core

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"
)

// A diff is computed once per DiffTips and page, and kept twice: in this replica's
// memory (bounded by bytes, the least recently read dropped first), and in the blob
// store every replica shares, so that a view on another replica, or after a restart,
// does not compute it again. The shared copy is one blob per workspace holding the
// pages of its newest tips (at most sharedDiffPages): a new head replaces it, and the
// workspace's deletion removes it. It is sealed like attachments; without a sealer
// only the replica's memory keeps diffs.

// DiffLimits bound the app's diffs.
type DiffLimits struct {
	// PerAccount is how many diffs one account may have being computed at once on
	// this replica (0: DefaultDiffsPerAccount); a view past it is refused in words.
	// Kept diffs are read without a place.
	PerAccount int
	// Timeout bounds the computation of one diff (0: DefaultDiffTimeout); past it
	// git is killed and the page says the changes took too long.
	Timeout time.Duration
	// CacheBytes bounds this replica's memory of computed diffs (0:
	// DefaultDiffCacheBytes).
	CacheBytes int
}

// The DiffLimits defaults.
const (
	DefaultDiffsPerAccount = 2
	DefaultDiffTimeout     = 20 * time.Second
	DefaultDiffCacheBytes  = 32 << 20
)

// sharedDiffPages bounds the pages one workspace's shared blob holds.
const sharedDiffPages = 8

func (l DiffLimits) perAccount() int {
	if l.PerAccount > 0 {
		return l.PerAccount
	}
	return DefaultDiffsPerAccount
}

func (l DiffLimits) timeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return DefaultDiffTimeout
}

func (l DiffLimits) cacheBytes() int {
	if l.CacheBytes > 0 {
		return l.CacheBytes
	}
	return DefaultDiffCacheBytes
}

// diffKey names one kept page.
type diffKey struct {
	workspace string
	remote    bool
	tips      DiffTips
	page      int
}

// diffBlobKey is the blob of a workspace's shared diffs.
func diffBlobKey(workspaceID string) string { return "diffs/" + workspaceID }

// sharedDiffs is the shared blob's content.
type sharedDiffs struct {
	Remote bool
	Tips   DiffTips
	Pages  map[string]*BranchDiff // by page number
}

// diffCache keeps computed pages. Fail open: a blob that cannot be read or written
// is a page computed again, and the log says why.
type diffCache struct {
	blobs  BlobStore
	sealer Sealer
	log    func(msg string, args ...any)
	max    int

	mu    sync.Mutex
	bytes int
	order *list.List // of *keptDiff, the most recently read first
	kept  map[diffKey]*list.Element
}

type keptDiff struct {
	key  diffKey
	body []byte // the page as JSON: each read decodes its own copy
}

func newDiffCache(blobs BlobStore, sealer Sealer, maxBytes int, log func(string, ...any)) *diffCache {
	return &diffCache{blobs: blobs, sealer: sealer, log: log, max: maxBytes, order: list.New(), kept: map[diffKey]*list.Element{}}
}

// get is the kept page of k, nil when none is.
func (c *diffCache) get(ctx context.Context, k diffKey) *BranchDiff {
	c.mu.Lock()
	e, ok := c.kept[k]
	var body []byte
	if ok {
		c.order.MoveToFront(e)
		body = e.Value.(*keptDiff).body
	}
	c.mu.Unlock()
	if ok {
		var d BranchDiff
		if err := json.Unmarshal(body, &d); err == nil {
			return &d
		}
	}
	shared := c.readShared(ctx, k)
	if shared == nil {
		return nil
	}
	d := shared.Pages[strconv.Itoa(k.page)]
	if d == nil {
		return nil
	}
	c.remember(k, d)
	return d
}

// put keeps d as the page of k, here and in the shared blob.
func (c *diffCache) put(ctx context.Context, k diffKey, d *BranchDiff) {
	c.remember(k, d)
	if c.blobs == nil || c.sealer == nil {
		return
	}
	shared := c.readShared(ctx, k)
	if shared == nil {
		shared = &sharedDiffs{Remote: k.remote, Tips: k.tips, Pages: map[string]*BranchDiff{}}
	}
	if len(shared.Pages) >= sharedDiffPages {
		clear(shared.Pages) // a rare branch of many pages: its newest page starts again
	}
	shared.Pages[strconv.Itoa(k.page)] = d
	body, err := json.Marshal(shared)
	if err == nil {
		body, err = c.sealer.Seal(body, diffBinding(k.workspace))
	}
	if err == nil {
		err = c.blobs.Put(context.WithoutCancel(ctx), diffBlobKey(k.workspace), body)
	}
	if err != nil {
		c.log("keep a diff for other replicas", "workspace", k.workspace, "err", err)
	}
}

// readShared is the shared blob of k's workspace when it holds k's tips.
func (c *diffCache) readShared(ctx context.Context, k diffKey) *sharedDiffs {
	if c.blobs == nil || c.sealer == nil {
		return nil
	}
	sealed, err := c.blobs.Get(ctx, diffBlobKey(k.workspace))
	if err != nil {
		if !errors.Is(err, ErrNoRows) && ctx.Err() == nil {
			c.log("read a diff kept by another replica", "workspace", k.workspace, "err", err)
		}
		return nil
	}
	var shared sharedDiffs
	body, err := c.sealer.Open(sealed, diffBinding(k.workspace))
	if err == nil {
		err = json.Unmarshal(body, &shared)
	}
	if err != nil { // sealed under a key since rotated, say: computed again
		return nil
	}
	if shared.Remote != k.remote || shared.Tips != k.tips || shared.Pages == nil {
		return nil
	}
	return &shared
}

// remember keeps d in this replica's memory, dropping the least recently read pages
// past the bound.
func (c *diffCache) remember(k diffKey, d *BranchDiff) {
	body, err := json.Marshal(d)
	if err != nil || len(body) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.kept[k]; ok {
		c.bytes -= len(e.Value.(*keptDiff).body)
		c.order.Remove(e)
	}
	c.kept[k] = c.order.PushFront(&keptDiff{key: k, body: body})
	c.bytes += len(body)
	for c.bytes > c.max {
		last := c.order.Back()
		old := last.Value.(*keptDiff)
		c.order.Remove(last)
		delete(c.kept, old.key)
		c.bytes -= len(old.body)
	}
}

// diffBinding binds a workspace's sealed diffs to it.
func diffBinding(workspaceID string) string { return "diff:" + workspaceID }

// accountRuns counts each account's diffs being computed on this replica.
type accountRuns struct {
	max     int
	mu      sync.Mutex
	running map[string]int
}

func newAccountRuns(max int) *accountRuns { return &accountRuns{max: max, running: map[string]int{}} }

// acquire takes a place for one more of the account's runs and returns its release;
// false when the account holds all its places.
func (r *accountRuns) acquire(account string) (func(), bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running[account] >= r.max {
		return nil, false
	}
	r.running[account]++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.running[account]--; r.running[account] <= 0 {
				delete(r.running, account)
			}
		})
	}, true
}
