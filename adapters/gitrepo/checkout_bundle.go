package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CreateFromBundle makes c.Dir a checkout of refs/heads/<branch> of a git bundle (what
// a remote runtime gets from the hub: it reaches no repository itself). Like Create,
// an existing checkout on the branch is kept, and the hub's config is written from the
// start.
//
// The file is read as a bundle before git sees it: git fetch takes a file that is not
// one (a "gitdir:" line) as a path to another repository.
func (c *Checkout) CreateFromBundle(ctx context.Context, bundle, branch string) error {
	if err := checkBundleFile(bundle, "refs/heads/"+branch); err != nil {
		return err
	}
	g := c.git()
	tmp, kept, err := c.begin(ctx, g, branch)
	if err != nil || kept {
		return err
	}
	steps := [][]string{
		{"init", "--quiet", tmp},
		{"-C", tmp, "-c", "transfer.fsckObjects=true", "fetch", "--quiet", "--no-tags", "--", bundle, "refs/heads/" + branch},
		{"-C", tmp, "-c", "checkout.workers=0", "checkout", "--quiet", "-b", branch, "FETCH_HEAD"},
	}
	for _, args := range steps {
		if _, err := g.run(ctx, "", args...); err != nil {
			_ = os.RemoveAll(tmp)
			return err
		}
	}
	return c.finish(ctx, g, tmp, branch)
}

// BundleSince writes to path a bundle of the branch's commits that since (a commit
// the hub has) lacks; false when there are none.
func (c *Checkout) BundleSince(ctx context.Context, branch, since, path string) (bool, error) {
	if err := c.secure(branch); err != nil {
		return false, err
	}
	// The branch still at the hub's head (a turn that committed nothing) is read from
	// its ref file, without starting git; anything else is git's to say.
	if since != "" {
		if id, err := refID(filepath.Join(c.Dir, ".git"), "refs/heads/"+branch); err == nil && id == strings.ToLower(since) {
			return false, nil
		}
	}
	g := c.git()
	head, err := g.run(ctx, c.Dir, "rev-parse", "--verify", "refs/heads/"+branch+"^{commit}")
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(head) == since {
		return false, nil
	}
	args := []string{"bundle", "create", "--quiet", path, "refs/heads/" + branch}
	if since != "" {
		args = append(args, "^"+since)
	}
	if _, err := g.run(ctx, c.Dir, args...); err != nil {
		return false, err
	}
	return true, nil
}

// checkBundleFile reads the header of the bundle at path: it must be a git bundle
// holding ref.
func checkBundleFile(path, ref string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h, err := readBundleHeader(f)
	if err != nil {
		return err
	}
	if _, ok := h.refs[ref]; !ok {
		return fmt.Errorf("%w: it does not hold %s", errNotBundle, ref)
	}
	return nil
}
