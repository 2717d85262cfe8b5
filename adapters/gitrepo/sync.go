package gitrepo

import (
	"context"
	"errors"
	"os"
	"strings"
)

// clone makes a fresh mirror in a temporary directory beside path and renames it
// into place, so path exists only once the clone is complete.
func (g *runner) clone(ctx context.Context, dir, projectID, path, repository string) error {
	tmp, err := os.MkdirTemp(dir, ".tmp-"+projectID+"-*")
	if err != nil {
		return &Error{Op: "clone", Reason: reasonOf(err, g.redact), Err: err}
	}
	g.redact.tmp = tmp
	defer os.RemoveAll(tmp) // a no-op once renamed
	if _, err := g.run(ctx, "", "clone", "--mirror", "--quiet", "--", repository, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		// Another process made the mirror first: use theirs.
		if _, serr := os.Stat(path); serr == nil {
			return g.refresh(ctx, path, repository)
		}
		return &Error{Op: "clone", Reason: reasonOf(err, g.redact), Err: err}
	}
	return nil
}

// refresh points the mirror at repository, fetches every ref (dropping deleted ones)
// and follows a change of the repository's default branch, which a fetch alone does
// not: a mirror's HEAD is set once, at clone time.
func (g *runner) refresh(ctx context.Context, path, repository string) error {
	if _, err := g.run(ctx, path, "remote", "set-url", "--", "origin", repository); err != nil {
		return err
	}
	if _, err := g.run(ctx, path, "remote", "update", "--prune"); err != nil {
		return err
	}
	out, err := g.run(ctx, path, "ls-remote", "--symref", "origin", "HEAD")
	if err != nil {
		return err
	}
	if ref := headSymref(out); ref != "" {
		if _, err := g.run(ctx, path, "symbolic-ref", "HEAD", ref); err != nil {
			return err
		}
	}
	return nil
}

// headSymref extracts the branch from ls-remote --symref output
// ("ref: refs/heads/trunk\tHEAD"); "" when the remote did not say.
func headSymref(out string) string {
	for line := range strings.Lines(out) {
		ref, ok := strings.CutPrefix(strings.TrimSpace(line), "ref: ")
		if !ok {
			continue
		}
		ref, ok = strings.CutSuffix(ref, "\tHEAD")
		if ok && strings.HasPrefix(ref, "refs/heads/") {
			return ref
		}
	}
	return ""
}

// defaultBranch is the branch the mirror's HEAD names, or "" when HEAD is detached or
// its branch has no commit yet (an empty repository).
func (g *runner) defaultBranch(ctx context.Context, path string) (string, error) {
	branch, err := g.run(ctx, path, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", nil // detached HEAD
		}
		return "", err
	}
	branch = strings.TrimSpace(branch)
	if _, err := g.run(ctx, path, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}"); err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.ExitCode == 1 {
			return "", nil // unborn branch
		}
		return "", err
	}
	return branch, nil
}
