package gitrepo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/wshub/wshub/core"
)

// WorkspaceBranches is the hub's copy of remote workspaces' branches (core.Branches).
// The copy every replica shares is a row (Copies: base, head, bundle) and a git bundle
// of the branch's commits since base in the blob store (Blobs). Each replica keeps a
// cache of it under Dir: one bare repository per workspace, cloned from the project
// mirror (hard links), holding refs/heads/<branch> and the commit it started from
// (baseRefName) only, brought up to the row before it serves a checkout, takes commits
// or pushes (shared_branches.go).
// It is apart from the mirror because refreshing a mirror prunes every ref the
// upstream lacks. The runtime sends its turns' commits here as bundles; pushes to the
// project's repository start here, with the hub's credentials.
type WorkspaceBranches struct {
	Dir string
	Git string // default "git"
	// Copies and Blobs hold the shared copy. Without them (nil) the cache is the copy:
	// one hub, its disk the only one.
	Copies core.BranchCopies
	Blobs  core.BlobStore
	// Mirror refreshes a project's mirror that lacks a branch's base commit (nil: the
	// mirror is as it is).
	Mirror *Mirror
	// Auth gives each project's credentials for pushing (nil: none).
	Auth *ProjectCredentials
	// MaxObjectBytes bounds one object (a file) of an upload, inflated, and
	// MaxBranchBytes what a workspace's uploads may add to its repository on disk
	// (0: DefaultMaxObjectBytes, DefaultMaxBranchBytes). A 1 MB bundle can inflate to
	// a 1 GiB file: the sizes are read from the pack and checked before git inflates it.
	MaxObjectBytes, MaxBranchBytes int64

	locks sync.Map // workspace id -> *sync.Mutex: one cache update at a time
}

var _ core.Branches = (*WorkspaceBranches)(nil)

func (b *WorkspaceBranches) git() *runner {
	prog := cmp.Or(b.Git, "git")
	return &runner{prog: prog, redact: redactor{dir: b.Dir}}
}

func (b *WorkspaceBranches) path(ws *core.Workspace) (string, error) {
	if !core.ValidID(ws.ID, core.PrefixWorkspace) {
		return "", fmt.Errorf("workspace id %q is not an id", ws.ID)
	}
	return filepath.Join(b.Dir, ws.ID+".git"), nil
}

// bundleLocal writes a bundle of refs/heads/<branch> of the cache at dir.
func (b *WorkspaceBranches) bundleLocal(ctx context.Context, g *runner, dir string, ws *core.Workspace, w io.Writer) (string, error) {
	head, err := g.run(ctx, dir, "rev-parse", "--verify", "refs/heads/"+ws.Branch+"^{commit}")
	if err != nil {
		return "", err
	}
	// git writes the bundle through a lock file renamed into place: the file is
	// opened once git is done.
	tmp, err := os.MkdirTemp(b.Dir, "bundle-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "branch.bundle")
	if _, err := g.run(ctx, dir, "bundle", "create", "--quiet", path, "refs/heads/"+ws.Branch); err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		return "", err
	}
	return strings.TrimSpace(head), nil
}

// resolveBase is the commit baseRef names in the mirror (a branch, tag or commit);
// ErrBaseRefNotFound when none.
func resolveBase(ctx context.Context, g *runner, mirror string, ws *core.Workspace) (string, error) {
	for _, candidate := range []string{"refs/heads/" + ws.BaseRef, "refs/tags/" + ws.BaseRef, ws.BaseRef} {
		out, err := g.run(ctx, mirror, "rev-parse", "--verify", "--quiet", candidate+"^{commit}")
		if err == nil && strings.TrimSpace(out) != "" {
			return strings.TrimSpace(out), nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	return "", core.ErrBaseRefNotFound
}

// create clones the mirror bare and points the workspace branch at base, a commit the
// mirror holds (errBaseMissing when it does not). The clone is made aside and renamed
// into place.
func (b *WorkspaceBranches) create(ctx context.Context, g *runner, dir, mirror string, ws *core.Workspace, base string) error {
	if err := os.MkdirAll(b.Dir, 0o700); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if _, err := g.run(ctx, "", "clone", "--quiet", "--bare", "--local", "--", mirror, tmp); err != nil {
		return err
	}
	err := hasCommit(ctx, g, tmp, base)
	// Only the workspace branch: the bundle then carries nothing else.
	refs := ""
	if err == nil {
		refs, err = g.run(ctx, tmp, "for-each-ref", "--format=delete %(refname)")
	}
	if err == nil && refs != "" {
		_, err = g.runInput(ctx, tmp, refs, "update-ref", "--stdin")
	}
	if err == nil {
		_, err = g.run(ctx, tmp, "update-ref", "refs/heads/"+ws.Branch, base)
	}
	if err == nil { // what the app's diff compares the branch with; bundles name the branch only
		_, err = g.run(ctx, tmp, "update-ref", baseRefName, base)
	}
	if err == nil {
		_, err = g.run(ctx, tmp, "symbolic-ref", "HEAD", "refs/heads/"+ws.Branch)
	}
	if err == nil {
		err = writeBasePacks(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
	}
	return err
}

// errBaseMissing: the mirror lacks the commit a branch copy starts from (fetched at
// another replica after this one's mirror was).
var errBaseMissing = errors.New("the mirror lacks the branch's base commit")

func hasCommit(ctx context.Context, g *runner, repo, commit string) error {
	if _, err := g.run(ctx, repo, "cat-file", "-e", commit+"^{commit}"); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s", errBaseMissing, commit)
	}
	return nil
}

// baseRefName holds the commit baseRef named when the workspace's repository was made.
const baseRefName = "refs/wshub/base"

// maxBundleBytes bounds a turn's commits; the API's body limit is the first bound.
const maxBundleBytes = core.MaxAssetBytes

// Defaults of the limits on what a workspace's uploads may hold.
const (
	// DefaultMaxObjectBytes is the largest file (blob) one commit may add, inflated:
	// GitHub's own limit.
	DefaultMaxObjectBytes = 100 << 20
	// DefaultMaxBranchBytes is what a workspace's uploads may add to its branch's
	// repository on disk, all turns together.
	DefaultMaxBranchBytes = 1 << 30
	// maxImportObjects bounds the objects of one upload.
	maxImportObjects = 1 << 20
)

// basePacks names the packs a workspace's repository had when it was made (hard links
// to the mirror's): what its uploads added is everything else.
const basePacks = "wshub-base-packs"

func (b *WorkspaceBranches) maxObject() int64 { return cmp.Or(b.MaxObjectBytes, DefaultMaxObjectBytes) }
func (b *WorkspaceBranches) maxBranch() int64 { return cmp.Or(b.MaxBranchBytes, DefaultMaxBranchBytes) }

// refused is an upload the hub does not take: a fixed sentence for the runtime, with
// what git or the reader said kept for the hub's log (it names the hub's paths).
func refused(code, detail string, cause error) error {
	if cause == nil {
		return core.Errorf(code, "%s", detail)
	}
	if ge := (*Error)(nil); errors.As(cause, &ge) && ge.Stderr != "" {
		cause = fmt.Errorf("%w: %s", cause, strings.TrimSpace(ge.Stderr)) // fsck names the object and the check
	}
	return fmt.Errorf("%w (%w)", core.Errorf(code, "%s", detail), cause)
}

// importLocal takes the commits of a runtime's bundle into the workspace's repository.
// The bundle is untrusted, and no git command reads it as a file: the hub reads the
// header itself (a v2 or v3 bundle of refs/heads/<branch> only, whose prerequisites
// are in the branch), bounds the pack by its objects' declared sizes, and has git
// index it from standard input with full fsck (index-pack --strict) into a quarantine
// beside the repository's objects. Only an accepted update moves the objects in and
// the branch forward; anything refused leaves nothing behind.
func (b *WorkspaceBranches) importLocal(ctx context.Context, ws *core.Workspace, bundle io.Reader) (string, error) {
	dir, err := b.path(ws)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err != nil {
		return "", refused(core.CodeCommitsRefused, "the workspace has no branch at the hub yet: its checkout comes first", err)
	}
	unlock, err := lockImport(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	tmp, err := os.CreateTemp(b.Dir, "import-*.bundle")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, io.LimitReader(bundle, maxBundleBytes+1))
	if err != nil {
		return "", err
	}
	if n > maxBundleBytes {
		return "", refused(core.CodeCommitsTooLarge, fmt.Sprintf("the bundle is larger than %d bytes", maxBundleBytes), nil)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h, err := readBundleHeader(tmp)
	if err != nil {
		return "", refused(core.CodeCommitsRefused, "the upload is not a git bundle of the workspace's branch", err)
	}
	ref := "refs/heads/" + ws.Branch
	newHead, ok := h.refs[ref]
	if !ok || len(h.refs) != 1 {
		return "", refused(core.CodeCommitsRefused, "the bundle must hold the workspace's branch, "+ref+", and nothing else", nil)
	}
	g := b.git()
	format, err := g.run(ctx, dir, "rev-parse", "--show-object-format")
	if err != nil {
		return "", err
	}
	if want := map[string]int{"sha1": 40, "sha256": 64}[strings.TrimSpace(format)]; want != h.hexLen {
		return "", refused(core.CodeCommitsRefused, "the bundle's object format is not the repository's", nil)
	}
	oldHead, err := g.run(ctx, dir, "rev-parse", "--verify", ref+"^{commit}")
	if err != nil {
		return "", err
	}
	oldHead = strings.TrimSpace(oldHead)
	if err := b.checkPrerequisites(ctx, g, dir, oldHead, h.prerequisites); err != nil {
		return "", err
	}
	if newHead == oldHead {
		return oldHead, nil // sent again after a lost answer: nothing to take
	}
	if _, err := tmp.Seek(h.packOffset, io.SeekStart); err != nil {
		return "", err
	}
	added, err := b.addedBytes(dir)
	if err != nil {
		return "", err
	}
	if err := scanPack(tmp, h.hexLen/2, packLimits{maxObject: b.maxObject(), maxTotal: b.maxBranch(), maxObjects: maxImportObjects}); err != nil {
		switch {
		case errors.Is(err, errObjectTooLarge):
			return "", refused(core.CodeCommitsTooLarge, fmt.Sprintf("a file in the commits is larger than the %d bytes the hub takes", b.maxObject()), err)
		case errors.Is(err, errPackTooLarge):
			return "", refused(core.CodeCommitsTooLarge, fmt.Sprintf("the commits hold more than the %d bytes a workspace's branch may hold", b.maxBranch()), err)
		}
		return "", refused(core.CodeCommitsRefused, "the bundle's pack is malformed", err)
	}
	q, err := newQuarantine(dir)
	if err != nil {
		return "", err
	}
	defer q.remove()
	if _, err := tmp.Seek(h.packOffset, io.SeekStart); err != nil {
		return "", err
	}
	if _, err := g.runWith(ctx, dir, tmp, q.env(dir), "index-pack", "--strict", "--fix-thin", "--stdin"); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", refused(core.CodeCommitsRefused, "the commits' objects failed git's checks", err)
	}
	// Every object the new head needs is there, and the branch only moves forward.
	if _, err := g.runWith(ctx, dir, nil, q.env(dir), "rev-list", "--quiet", "--objects", newHead, "--not", oldHead); err != nil {
		return "", refused(core.CodeCommitsRefused, "the bundle lacks objects its branch needs", err)
	}
	if _, err := g.runWith(ctx, dir, nil, q.env(dir), "merge-base", "--is-ancestor", oldHead, newHead); err != nil {
		return "", refused(core.CodeCommitsRefused, "the bundle's branch does not build on the hub's head", err)
	}
	size, err := q.size()
	if err != nil {
		return "", err
	}
	if added+size > b.maxBranch() {
		return "", refused(core.CodeCommitsTooLarge, fmt.Sprintf("the workspace's branch would hold more than the %d bytes it may", b.maxBranch()), nil)
	}
	if err := q.migrate(dir); err != nil {
		return "", err
	}
	if _, err := g.run(ctx, dir, "update-ref", ref, newHead, oldHead); err != nil {
		return "", err
	}
	return newHead, nil
}

// checkPrerequisites: each commit the bundle builds on must be in the branch's
// history (not merely somewhere in the repository, which holds the mirror's objects).
func (b *WorkspaceBranches) checkPrerequisites(ctx context.Context, g *runner, dir, head string, prereqs []string) error {
	if len(prereqs) == 0 {
		return nil
	}
	var in strings.Builder
	for _, p := range prereqs {
		in.WriteString(p + "\n")
	}
	in.WriteString("^" + head + "\n")
	// Commits reachable from the prerequisites but not from the head: none may exist,
	// and a prerequisite the repository lacks fails the walk.
	out, err := g.runInput(ctx, dir, in.String(), "rev-list", "--stdin")
	if err == nil && strings.TrimSpace(out) != "" {
		err = errors.New("commits outside the branch: " + strings.SplitN(out, "\n", 2)[0])
	}
	if err != nil {
		return refused(core.CodeCommitsRefused, "the bundle builds on commits the workspace's branch does not have", err)
	}
	return nil
}

// addedBytes is what uploads added to the workspace's repository: its objects on disk
// but the packs it was made with.
func (b *WorkspaceBranches) addedBytes(dir string) (int64, error) {
	base := map[string]bool{}
	if list, err := os.ReadFile(filepath.Join(dir, basePacks)); err == nil {
		for _, name := range strings.Fields(string(list)) {
			base[name] = true
		}
	}
	objects := filepath.Join(dir, "objects")
	return diskBytes(objects, func(path string, d fs.DirEntry) bool {
		rel, _ := filepath.Rel(objects, path)
		return strings.HasPrefix(rel, "incoming-") || filepath.Dir(rel) == "pack" && base[d.Name()]
	})
}

// localHead returns the head of this hub's cache of the branch ("" when it has none).
func (b *WorkspaceBranches) localHead(ctx context.Context, ws *core.Workspace) (string, error) {
	dir, err := b.path(ws)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	head, err := b.git().run(ctx, dir, "rev-parse", "--verify", "refs/heads/"+ws.Branch+"^{commit}")
	return strings.TrimSpace(head), err
}

// pushLocal pushes the cache's workspace branch to the project's repository, with the
// project's credentials.
func (b *WorkspaceBranches) pushLocal(ctx context.Context, ws *core.Workspace, p *core.Project) error {
	dir, err := b.path(ws)
	if err != nil {
		return err
	}
	creds, err := b.Auth.For(ctx, p)
	if err != nil {
		return fmt.Errorf("the project's credential: %w", err)
	}
	g := b.git()
	g.creds, g.redact.token = creds, creds.token()
	_, err = g.run(ctx, dir, "push", "--quiet", "--", p.Repository, "refs/heads/"+ws.Branch+":refs/heads/"+ws.Branch)
	if err != nil {
		return errors.New(PushRefusal(err))
	}
	return nil
}

// removeLocal deletes this hub's cache of the workspace's repository.
func (b *WorkspaceBranches) removeLocal(ctx context.Context, ws *core.Workspace) error {
	dir, err := b.path(ws)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}
