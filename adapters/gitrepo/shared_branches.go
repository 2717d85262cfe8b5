package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wshub/wshub/core"
)

// The shared copy of a remote workspace's branch and this hub's cache of it.
//
// The row (core.BranchCopy) is the truth: base, head, and the blob of a bundle of
// base..head. A cache whose branch is not at the row's head is brought there from the
// blob before it is used; one whose repository is gone is made again from the mirror
// at base. Commits a runtime uploads are checked and taken into the cache (importLocal),
// bundled since base into a blob named by the new head, and published by moving the
// row's head from the one the import started from: of two replicas taking commits at
// once, one moves it and the other's upload is refused as in progress. Bundles hold all
// of a branch's commits since base, so any cache catches up from one blob, whatever it
// held before; a workspace's branch is bounded (MaxBranchBytes), and so are they.

// Bundle writes a bundle of the workspace's branch, making the branch from baseRef in
// the mirror the first time.
func (b *WorkspaceBranches) Bundle(ctx context.Context, ws *core.Workspace, p *core.Project, w io.Writer) (string, error) {
	cache, err := b.open(ctx, ws, p)
	if err != nil {
		return "", err
	}
	defer cache.unlock()
	if cache.copy == nil {
		if err := b.first(ctx, cache.g, cache.dir, ws, p); err != nil {
			return "", err
		}
	}
	return b.bundleLocal(ctx, cache.g, cache.dir, ws, w)
}

// cache is this hub's cache of a workspace's branch, locked and brought up to the
// shared copy (nil before the first checkout).
type cache struct {
	dir    string
	g      *runner
	copy   *core.BranchCopy
	unlock func()
}

// open locks the workspace's cache and brings it up to the shared copy; the caller
// unlocks it.
func (b *WorkspaceBranches) open(ctx context.Context, ws *core.Workspace, p *core.Project) (*cache, error) {
	dir, err := b.path(ws)
	if err != nil {
		return nil, err
	}
	c := &cache{dir: dir, g: b.git(), unlock: b.lock(ws)}
	if c.copy, err = b.sync(ctx, c.g, dir, ws, p); err != nil {
		c.unlock()
		return nil, err
	}
	return c, nil
}

// first makes the workspace's branch from baseRef and records it, unless another
// replica recorded one first: then this cache is made again from that one.
func (b *WorkspaceBranches) first(ctx context.Context, g *runner, dir string, ws *core.Workspace, p *core.Project) error {
	base, err := resolveBase(ctx, g, p.MirrorPath, ws)
	if err != nil {
		return err
	}
	_ = os.RemoveAll(dir) // a cache left by a copy since deleted
	if err := b.create(ctx, g, dir, p.MirrorPath, ws, base); err != nil {
		return err
	}
	if b.Copies == nil {
		return nil
	}
	created, err := b.Copies.CreateBranchCopy(ctx, core.BranchCopy{WorkspaceID: ws.ID, Base: base, Head: base})
	if err != nil || created {
		return err
	}
	// Another replica made it first, perhaps from another base: make the cache again
	// from its copy.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	c, err := b.sync(ctx, g, dir, ws, p)
	if err == nil && c == nil {
		err = errors.New("the branch copy another hub recorded is gone")
	}
	return err
}

// sync brings the cache at dir to the shared copy and returns it; nil when the branch
// has none yet (and without Copies, the cache as it is, or nil when there is none).
// A cache from before copies were shared is published as the copy (adopt).
func (b *WorkspaceBranches) sync(ctx context.Context, g *runner, dir string, ws *core.Workspace, p *core.Project) (*core.BranchCopy, error) {
	local, err := b.localHead(ctx, ws)
	if err != nil {
		return nil, err
	}
	if b.Copies == nil {
		if local == "" {
			return nil, nil
		}
		return &core.BranchCopy{WorkspaceID: ws.ID, Head: local}, nil
	}
	// A bundle superseded between reading the row and fetching it is gone: read again.
	for range 3 {
		c, err := b.Copies.BranchCopy(ctx, ws.ID)
		if errors.Is(err, core.ErrNoRows) {
			if local == "" {
				return nil, nil
			}
			return b.adopt(ctx, g, dir, ws, local)
		}
		if err != nil || c.Head == local {
			return c, err
		}
		if local == "" {
			if err := b.rebuild(ctx, g, dir, ws, p, c.Base); err != nil {
				return nil, err
			}
		}
		err = b.catchUp(ctx, g, dir, ws, c)
		if errors.Is(err, core.ErrNoRows) {
			local, err = b.localHead(ctx, ws)
			if err != nil {
				return nil, err
			}
			continue
		}
		return c, err
	}
	return nil, errors.New("the branch copy kept moving while this hub read it")
}

// rebuild makes the cache again from the mirror at base, refreshing the mirror when it
// lacks base (it was fetched at another replica, later than here).
func (b *WorkspaceBranches) rebuild(ctx context.Context, g *runner, dir string, ws *core.Workspace, p *core.Project, base string) error {
	_, statErr := os.Stat(p.MirrorPath)
	if statErr == nil {
		err := b.create(ctx, g, dir, p.MirrorPath, ws, base)
		if !errors.Is(err, errBaseMissing) || b.Mirror == nil {
			return err
		}
	}
	if b.Mirror == nil {
		return statErr
	}
	if err := b.Mirror.Refresh(ctx, p, 0); err != nil {
		return fmt.Errorf("fetch the project's mirror for the branch's base: %w", err)
	}
	return b.create(ctx, g, dir, p.MirrorPath, ws, base)
}

// catchUp moves the cache's branch to the copy's head: to base, or to the head of the
// copy's bundle. The bundle is the hubs' own, written after its commits passed
// importLocal's checks, so git fetches from it directly. core.ErrNoRows when the
// bundle is gone (superseded).
func (b *WorkspaceBranches) catchUp(ctx context.Context, g *runner, dir string, ws *core.Workspace, c *core.BranchCopy) error {
	ref := "refs/heads/" + ws.Branch
	if c.Bundle == "" {
		_, err := g.run(ctx, dir, "update-ref", ref, c.Head)
		return err
	}
	rc, err := b.Blobs.Open(ctx, c.Bundle, 0, -1)
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(b.Dir, "copy-*.bundle")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, rc); err != nil {
		return fmt.Errorf("read the branch's bundle: %w", err)
	}
	if _, err := g.run(ctx, dir, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--update-head-ok",
		tmp.Name(), "+"+ref+":"+ref); err != nil {
		return err
	}
	got, err := b.localHead(ctx, ws)
	if err == nil && got != c.Head {
		err = fmt.Errorf("the branch's bundle %s holds %s, not the head %s", c.Bundle, got, c.Head)
	}
	return err
}

// adopt publishes a cache made before branch copies were shared as the copy.
func (b *WorkspaceBranches) adopt(ctx context.Context, g *runner, dir string, ws *core.Workspace, head string) (*core.BranchCopy, error) {
	base, err := g.run(ctx, dir, "rev-parse", "--verify", baseRefName+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("adopt the branch's cache: %w", err)
	}
	c := core.BranchCopy{WorkspaceID: ws.ID, Base: strings.TrimSpace(base), Head: head}
	if err := b.publish(ctx, g, dir, ws, &c); err != nil {
		return nil, err
	}
	if _, err := b.Copies.CreateBranchCopy(ctx, c); err != nil {
		return nil, err
	}
	return b.Copies.BranchCopy(ctx, ws.ID)
}

// publish writes the bundle of base..c.Head to the blob store and names it in c
// (nothing when the head is the base).
func (b *WorkspaceBranches) publish(ctx context.Context, g *runner, dir string, ws *core.Workspace, c *core.BranchCopy) error {
	if c.Head == c.Base {
		c.Bundle, c.BundleBytes = "", 0
		return nil
	}
	tmp, err := os.MkdirTemp(b.Dir, "publish-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "branch.bundle")
	if _, err := g.run(ctx, dir, "bundle", "create", "--quiet", path, "refs/heads/"+ws.Branch, "^"+c.Base); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	key := branchBlobKey(ws, c.Head)
	if err := b.Blobs.PutFrom(ctx, key, f, fi.Size()); err != nil {
		return err
	}
	c.Bundle, c.BundleBytes = key, fi.Size()
	return nil
}

// branchBlobKey names the bundle of a branch at head: two replicas publishing the same
// head write the same commits under the same key.
func branchBlobKey(ws *core.Workspace, head string) string {
	return "branch_" + ws.ID + "/" + head
}

// Import takes a runtime's commits into the cache brought up to the shared copy, then
// publishes the new head.
func (b *WorkspaceBranches) Import(ctx context.Context, ws *core.Workspace, p *core.Project, bundle io.Reader) (string, error) {
	cache, err := b.open(ctx, ws, p)
	if err != nil {
		return "", err
	}
	defer cache.unlock()
	c := cache.copy
	if c == nil {
		return "", refused(core.CodeCommitsRefused, "the workspace has no branch at the hub yet: its checkout comes first", nil)
	}
	head, err := b.importLocal(ctx, ws, bundle)
	if err != nil || head == c.Head || b.Copies == nil {
		return head, err
	}
	next := core.BranchCopy{WorkspaceID: ws.ID, Base: c.Base, Head: head}
	if err := b.publish(ctx, cache.g, cache.dir, ws, &next); err != nil {
		return "", err
	}
	moved, err := b.Copies.SwapBranchCopy(ctx, next, c.Head)
	if err != nil {
		return "", err
	}
	if !moved {
		now, err := b.Copies.BranchCopy(ctx, ws.ID)
		if err == nil && now.Head == head {
			return head, nil // the same upload, taken by another hub meanwhile
		}
		_ = b.Blobs.Delete(ctx, next.Bundle)
		return "", refused(core.CodeImportInProgress, "another upload of this workspace's commits was taken meanwhile; retry", err)
	}
	if c.Bundle != "" && c.Bundle != next.Bundle {
		// Best effort: a replica reading it now reads the row again (sync).
		_ = b.Blobs.Delete(ctx, c.Bundle)
	}
	return head, nil
}

// Head is the shared copy's head ("" before the first checkout). A cache from before
// copies were shared is published first, so its commits are the head reported.
func (b *WorkspaceBranches) Head(ctx context.Context, ws *core.Workspace) (string, error) {
	if b.Copies == nil {
		return b.localHead(ctx, ws)
	}
	c, err := b.Copies.BranchCopy(ctx, ws.ID)
	if errors.Is(err, core.ErrNoRows) {
		return b.adoptCache(ctx, ws)
	}
	if err != nil {
		return "", err
	}
	return c.Head, nil
}

// adoptCache publishes this hub's cache of a branch with no shared copy, if it has one.
func (b *WorkspaceBranches) adoptCache(ctx context.Context, ws *core.Workspace) (string, error) {
	dir, err := b.path(ws)
	if err != nil {
		return "", err
	}
	defer b.lock(ws)()
	local, err := b.localHead(ctx, ws)
	if err != nil || local == "" {
		return "", err
	}
	c, err := b.adopt(ctx, b.git(), dir, ws, local)
	if err != nil {
		return "", err
	}
	return c.Head, nil
}

// Sync brings this hub's cache up to the shared copy.
func (b *WorkspaceBranches) Sync(ctx context.Context, ws *core.Workspace, p *core.Project) error {
	cache, err := b.open(ctx, ws, p)
	if err == nil {
		cache.unlock()
	}
	return err
}

// Push pushes the shared copy's branch to the project's repository.
func (b *WorkspaceBranches) Push(ctx context.Context, ws *core.Workspace, p *core.Project) error {
	cache, err := b.open(ctx, ws, p)
	if err != nil {
		return err
	}
	defer cache.unlock()
	if cache.copy == nil {
		return errors.New("the workspace has no branch at the hub yet")
	}
	return b.pushLocal(ctx, ws, p)
}

// Remove deletes the shared copy and this hub's cache. Other replicas' caches of it
// stay on their disks, as their mirrors of removed projects do.
func (b *WorkspaceBranches) Remove(ctx context.Context, ws *core.Workspace) error {
	if _, err := b.path(ws); err != nil {
		return err
	}
	defer b.lock(ws)()
	if b.Copies != nil {
		c, err := b.Copies.BranchCopy(ctx, ws.ID)
		switch {
		case errors.Is(err, core.ErrNoRows):
		case err != nil:
			return err
		case c.Bundle != "":
			if err := b.Blobs.Delete(ctx, c.Bundle); err != nil {
				return err
			}
		}
		if err := b.Copies.DeleteBranchCopy(ctx, ws.ID); err != nil {
			return err
		}
	}
	return b.removeLocal(ctx, ws)
}

// lock serialises this hub's work on one workspace's cache and returns the unlock.
func (b *WorkspaceBranches) lock(ws *core.Workspace) func() {
	mu, _ := b.locks.LoadOrStore(ws.ID, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}
