package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wshub/wshub/core"
)

// WorkspaceBranches is the hub's copy of remote workspaces' branches (core.Branches):
// one bare repository per workspace under Dir, cloned from the project mirror (hard
// links) the first time its machine checks out, holding refs/heads/<branch> only.
// It is apart from the mirror because refreshing a mirror prunes every ref the
// upstream lacks. The runtime sends its turns' commits here as bundles; pushes to the
// project's repository start here, with the hub's credentials.
type WorkspaceBranches struct {
	Dir string
	Git string // default "git"
	// Credentials reach the projects' repositories when pushing (nil: none).
	Credentials *Credentials
}

var _ core.Branches = (*WorkspaceBranches)(nil)

func (b *WorkspaceBranches) git() *runner {
	prog := cmpOr(b.Git, "git")
	return &runner{prog: prog, redact: redactor{dir: b.Dir, token: b.Credentials.token()}, creds: b.Credentials}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (b *WorkspaceBranches) path(ws *core.Workspace) (string, error) {
	if !core.ValidID(ws.ID, core.PrefixWorkspace) {
		return "", fmt.Errorf("workspace id %q is not an id", ws.ID)
	}
	return filepath.Join(b.Dir, ws.ID+".git"), nil
}

// Bundle writes a bundle of refs/heads/<branch>, creating the workspace's repository
// from the mirror and the branch from baseRef the first time.
func (b *WorkspaceBranches) Bundle(ctx context.Context, ws *core.Workspace, mirror string, w io.Writer) (string, error) {
	dir, err := b.path(ws)
	if err != nil {
		return "", err
	}
	g := b.git()
	if _, err := os.Stat(dir); err != nil {
		if err := b.create(ctx, g, dir, mirror, ws); err != nil {
			return "", err
		}
	}
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

// create clones the mirror bare and points the workspace branch at baseRef (a branch,
// tag or commit of the repository). The clone is made aside and renamed into place.
func (b *WorkspaceBranches) create(ctx context.Context, g *runner, dir, mirror string, ws *core.Workspace) error {
	if err := os.MkdirAll(b.Dir, 0o700); err != nil {
		return err
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if _, err := g.run(ctx, "", "clone", "--quiet", "--bare", "--local", "--", mirror, tmp); err != nil {
		return err
	}
	base := ""
	for _, candidate := range []string{"refs/heads/" + ws.BaseRef, "refs/tags/" + ws.BaseRef, ws.BaseRef} {
		out, err := g.run(ctx, tmp, "rev-parse", "--verify", "--quiet", candidate+"^{commit}")
		if err == nil && strings.TrimSpace(out) != "" {
			base = strings.TrimSpace(out)
			break
		}
		if ctx.Err() != nil {
			_ = os.RemoveAll(tmp)
			return ctx.Err()
		}
	}
	if base == "" {
		_ = os.RemoveAll(tmp)
		return core.ErrBaseRefNotFound
	}
	// Only the workspace branch: the bundle then carries nothing else.
	refs, err := g.run(ctx, tmp, "for-each-ref", "--format=delete %(refname)")
	if err == nil && refs != "" {
		_, err = g.runInput(ctx, tmp, refs, "update-ref", "--stdin")
	}
	if err == nil {
		_, err = g.run(ctx, tmp, "update-ref", "refs/heads/"+ws.Branch, base)
	}
	if err == nil {
		_, err = g.run(ctx, tmp, "symbolic-ref", "HEAD", "refs/heads/"+ws.Branch)
	}
	if err == nil {
		err = os.Rename(tmp, dir)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
	}
	return err
}

// maxBundleBytes bounds a turn's commits; the API's body limit is the first bound.
const maxBundleBytes = core.MaxAssetBytes

// Import fetches the bundle's refs/heads/<branch> into the workspace's repository.
// The bundle is untrusted: it is verified against the repository (its prerequisite
// commits must be there), objects are checked as they arrive, and only the workspace
// branch is taken, moving forward only.
func (b *WorkspaceBranches) Import(ctx context.Context, ws *core.Workspace, bundle io.Reader) (string, error) {
	dir, err := b.path(ws)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("the workspace has no branch at the hub yet: %w", err)
	}
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
		return "", errors.New("the bundle is too large")
	}
	g := b.git()
	ref := "refs/heads/" + ws.Branch
	if _, err := g.run(ctx, dir, "-c", "transfer.fsckObjects=true", "fetch", "--quiet", "--no-tags", "--",
		tmp.Name(), ref+":"+ref); err != nil {
		return "", err
	}
	head, err := g.run(ctx, dir, "rev-parse", "--verify", ref+"^{commit}")
	return strings.TrimSpace(head), err
}

// Push pushes the workspace branch to repository.
func (b *WorkspaceBranches) Push(ctx context.Context, ws *core.Workspace, repository string) error {
	dir, err := b.path(ws)
	if err != nil {
		return err
	}
	_, err = b.git().run(ctx, dir, "push", "--quiet", "--", repository, "refs/heads/"+ws.Branch+":refs/heads/"+ws.Branch)
	if err != nil {
		return errors.New(PushRefusal(err))
	}
	return nil
}

// Remove deletes the workspace's repository.
func (b *WorkspaceBranches) Remove(ctx context.Context, ws *core.Workspace) error {
	dir, err := b.path(ws)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}
