package gitrepo

import (
	"cmp"
	"context"
	"errors"
)

// HasBranch reports whether the mirror at path has branch (refs/heads/<branch>: a
// mirror clone keeps the repository's branches as its own).
func (m *Mirror) HasBranch(ctx context.Context, path, branch string) (bool, error) {
	_, err := (&runner{prog: cmp.Or(m.Git, "git"), redact: redactor{dir: path}}).run(ctx, path, "show-ref", "--verify", "--quiet", "--", "refs/heads/"+branch)
	var ge *Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.ExitCode == 1: // show-ref --quiet: no such ref
		return false, nil
	}
	return false, err
}
