package gitrepo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Checkout is a workspace's working copy: a local clone of the project mirror on the
// workspace branch. A clone (objects hard-linked from the mirror) rather than a
// worktree of the mirror, because refreshing a mirror prunes every ref the upstream
// lacks, and the workspace branches exist only here until they are pushed.
type Checkout struct {
	Dir string
	Git string // default "git"
	// Credentials reach the project's repository when pushing (nil: none).
	Credentials *Credentials
	// MaxFileBytes is the largest file a commit takes (0: DefaultMaxFileBytes); a
	// larger one is left out and named.
	MaxFileBytes int64
	// MaxBytes is the workspace's disk quota: the checkout (.git included) and the
	// Counted directories (the agent's home) together (0: none). Over it, the turn's
	// work is not committed, and the reason is the one thing left out.
	MaxBytes int64
	Counted  []string
	// Author is who the commits are by (zero: DefaultAuthor).
	Author Author
	// Clean, when set, spares a commit of a checkout where nothing changed its git
	// status (clean_trees.go): the hub's, shared by its checkouts.
	Clean *CleanTrees
}

// DefaultMaxFileBytes is the largest file a turn's commit takes: GitHub's own limit,
// and far past what a commit of source needs.
const DefaultMaxFileBytes = 100 << 20

func (c *Checkout) maxFile() int64 { return cmp.Or(c.MaxFileBytes, DefaultMaxFileBytes) }

// notIgnored returns the paths of files git would add (not ignored by the checkout's
// .gitignore files): check-ignore reads ignore files and runs nothing.
func (c *Checkout) notIgnored(ctx context.Context, g *runner, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	out, err := g.runInput(ctx, c.Dir, strings.Join(paths, "\x00")+"\x00", "check-ignore", "-z", "--stdin")
	var ge *Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) { // 1: none is ignored
		return nil, err
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		ignored[p] = true
	}
	return slices.DeleteFunc(paths, func(p string) bool { return ignored[p] }), nil
}

// ErrRefNotFound means baseRef names no branch, tag or commit of the repository.
var ErrRefNotFound = errors.New("base ref not found")

func (c *Checkout) git() *runner {
	prog := c.Git
	if prog == "" {
		prog = "git"
	}
	return &runner{prog: prog, redact: redactor{dir: filepath.Dir(c.Dir), token: c.Credentials.token()}, creds: c.Credentials}
}

// Create clones mirror into c.Dir and checks out a new branch from baseRef (a branch,
// tag or commit). Creating again after a crash finishes the job: an existing clone on
// the branch is kept.
func (c *Checkout) Create(ctx context.Context, mirror, branch, baseRef string) error {
	g := c.git()
	tmp, kept, err := c.begin(ctx, g, branch)
	if err != nil || kept {
		return err
	}
	if _, err := g.run(ctx, "", "clone", "--quiet", "--local", "--no-checkout", mirror, tmp); err != nil {
		return err
	}
	base, err := resolveRef(ctx, g, tmp, baseRef)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	// Parallel checkout (one worker per core): writing a 50,000-file tree took 11 to
	// 34 s with git's serial checkout and 3 to 4 s with two workers on the benchmark
	// machine (make bench, B7).
	if _, err := g.run(ctx, tmp, "-c", "checkout.workers=0", "checkout", "--quiet", "-b", branch, base); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return c.finish(ctx, g, tmp, branch)
}

// finish moves a checkout made in tmp into place with the hub's own configuration
// from the start (no remote: the agent cannot reach where it came from, and pushes
// name their URL).
func (c *Checkout) finish(ctx context.Context, g *runner, tmp, branch string) error {
	if err := c.writeConfigCopy(ctx, g, tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, c.Dir); err != nil {
		return err
	}
	return c.secure(branch)
}

// begin starts a Create: kept is true when c.Dir is already a checkout on branch
// (a create that crashed after it finished); otherwise whatever is there is removed and
// tmp, beside it, is where the new checkout is made before it is renamed into place.
func (c *Checkout) begin(ctx context.Context, g *runner, branch string) (tmp string, kept bool, err error) {
	if _, err := os.Stat(filepath.Join(c.Dir, ".git")); err == nil {
		if c.secure(branch) == nil {
			if cur, err := g.run(ctx, c.Dir, "rev-parse", "--abbrev-ref", "HEAD"); err == nil && strings.TrimSpace(cur) == branch {
				return "", true, nil
			}
		}
		if err := os.RemoveAll(c.Dir); err != nil {
			return "", false, err
		}
	}
	tmp = c.Dir + ".tmp"
	_ = os.RemoveAll(tmp)
	return tmp, false, os.MkdirAll(filepath.Dir(c.Dir), 0o755)
}

// resolveRef finds baseRef among the mirror's branches, then tags, then commits.
func resolveRef(ctx context.Context, g *runner, dir, ref string) (string, error) {
	for _, candidate := range []string{"refs/remotes/origin/" + ref, "refs/tags/" + ref, ref} {
		out, err := g.run(ctx, dir, "rev-parse", "--verify", "--quiet", candidate+"^{commit}")
		if err == nil && strings.TrimSpace(out) != "" {
			return strings.TrimSpace(out), nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
	}
	return "", fmt.Errorf("%w: %s", ErrRefNotFound, ref)
}

// CommitAll commits every change in the checkout on branch; committed is false when
// the tree is clean. The repository is made safe for the hub's git first (secure).
//
// Repositories embedded in the checkout (gitlinks: a turn's clone of a dependency, a
// submodule) have their own .git/config, which secure does not own. `git add -A`,
// `git status` and a `git commit` with nothing to commit find out whether such a
// repository is dirty by running git status inside it, under its config, whose clean
// and process filters would then run as the hub. So the hub's commands never look
// into them: add skips the gitlinks, update-index records each one's HEAD (it reads
// refs, runs nothing), the change check compares the index with HEAD only, and
// commit is never asked to explain an empty commit. An embedded repository that is
// not wholly inside the checkout (nested.go) is left out, and said so in left.
func (c *Checkout) CommitAll(ctx context.Context, branch, message string) (bool, error) {
	committed, _, err := c.Commit(ctx, branch, message)
	return committed, err
}

// Commit is CommitAll, also returning the paths it left out and why.
func (c *Checkout) Commit(ctx context.Context, branch, message string) (committed bool, left []LeftOut, err error) {
	if err := c.secure(branch); err != nil {
		return false, nil, err
	}
	// A commit that fails or is cut short by its time limit leaves what git was
	// writing: its index.lock, which would fail every later commit, and temporary
	// packs and objects. Between turns .git is the hub's (no agent runs), so what is
	// there before the commit (a crash's, or planted by the agent) goes too.
	c.cleanLeftovers()
	defer func() {
		if err != nil {
			c.cleanLeftovers()
		}
	}()
	g := c.git()
	links, err := gitlinks(ctx, g, c.Dir)
	if err != nil {
		return false, nil, err
	}
	sum := c.Clean.newTreeSum()
	left, big, used, err := scanCheckout(c.Dir, c.maxFile(), sum)
	if err != nil {
		return false, nil, err
	}
	if c.MaxBytes > 0 {
		for _, d := range c.Counted {
			n, err := diskBytes(d, nil)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, nil, err
			}
			used += n
		}
		if used > c.MaxBytes {
			return false, []LeftOut{{Path: "(the whole turn)", Reason: fmt.Sprintf(
				"the workspace holds %d MiB, over its %d MiB disk quota: remove files, and the next turn's commit takes the work", used>>20, c.MaxBytes>>20)}}, nil
		}
	}
	tooBig, err := c.notIgnored(ctx, g, big)
	if err != nil {
		return false, nil, err
	}
	for _, f := range tooBig {
		left = append(left, LeftOut{Path: f, Reason: fmt.Sprintf("a file larger than the %d MiB a commit takes", c.maxFile()>>20)})
	}
	skip := map[string]bool{}
	for _, l := range left {
		skip[l.Path] = true
	}
	links = slices.DeleteFunc(links, func(l string) bool { return skip[l] })
	add := []string{"add", "-A", "--", "."}
	for _, l := range links {
		add = append(add, ":(exclude,literal)"+l)
	}
	for _, l := range left {
		add = append(add, ":(exclude,literal)"+l.Path)
	}
	kept, err := c.keptOut()
	if err != nil {
		return false, left, err
	}
	for _, l := range kept {
		add = append(add, ":(exclude,literal)"+l)
	}
	found := statusUnsure
	if len(links) == 0 {
		for _, l := range left {
			sum.mix(l.Path, l.Reason)
		}
		sum.mix(kept...)
		if c.Clean.clean(c.Dir, sum) {
			return false, left, nil // as status found it last time, and nothing has changed
		}
		found = c.status(ctx, g, left, kept)
	}
	if found == statusNothing {
		c.Clean.keep(c.Dir, sum)
		return false, left, nil
	}
	c.Clean.Forget(c.Dir)
	if _, err := g.run(ctx, c.Dir, add...); err != nil {
		return false, left, err
	}
	if len(links) > 0 {
		if _, err := g.run(ctx, c.Dir, append([]string{"update-index", "--add", "--remove", "--"}, links...)...); err != nil {
			return false, left, err
		}
	}
	if found != statusChange {
		_, err = g.run(ctx, c.Dir, "diff-index", "--cached", "--quiet", "HEAD", "--")
		var ge *Error
		switch {
		case err == nil:
			return false, left, nil // the index is HEAD's tree: nothing changed
		case !errors.As(err, &ge) || ge.ExitCode != 1:
			return false, left, err
		}
	}
	// --allow-empty: there is a change, and with it commit never runs a status.
	if _, err := g.runWith(ctx, c.Dir, nil, c.Author.env(), "commit", "--quiet", "--no-verify", "--allow-empty", "-m", message); err != nil {
		return false, left, err
	}
	return true, left, nil
}

// statusCap bounds what nothingToCommit reads of git status: a checkout with more to
// say than that has something to commit, found the long way.
const statusCap = 64 << 10

// What git status says of a turn's work (Checkout.status).
type statusFound int

const (
	// statusUnsure: the commit goes the long way (add, diff-index), which decides.
	statusUnsure statusFound = iota
	// statusNothing: no change to a tracked file, nothing staged, and no untracked
	// file but those left or kept out: nothing to commit.
	statusNothing
	// statusChange: nothing staged, and a change the add takes (a tracked file changed
	// or removed, a new file) outside everything left or kept out: the index was
	// HEAD's tree, so after the add it is not.
	statusChange
)

// status asks git status what the commit would take: one git where add and
// diff-index are two for a turn that changes nothing (a question answered), and
// diff-index saved for one that does. Any doubt is statusUnsure.
func (c *Checkout) status(ctx context.Context, g *runner, left []LeftOut, kept []string) statusFound {
	out := &cappedWriter{limit: statusCap}
	// The flags are explicit: the repository's config is the hub's (secure), but its
	// defaults for status are not what the commit's add does.
	excluded := slices.Clone(kept)
	for _, l := range left {
		excluded = append(excluded, l.Path)
	}
	// What is left or kept out is out of status's walk too, as it is out of the add's:
	// an embedded repository whose HEAD is a FIFO would hold git status forever.
	args := []string{"status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=none", "--no-renames", "--", "."}
	for _, e := range excluded {
		args = append(args, ":(exclude,literal)"+e)
	}
	err := g.runTo(ctx, c.Dir, nil, out, nil, args...)
	if err != nil || out.over {
		return statusUnsure
	}
	found := statusNothing
	for _, entry := range strings.Split(out.buf.String(), "\x00") {
		if entry == "" {
			continue
		}
		if len(entry) < 4 || entry[2] != ' ' {
			return statusUnsure
		}
		xy, path := entry[:2], strings.TrimSuffix(entry[3:], "/")
		switch {
		case xy == "??" && under(path, excluded):
			// Left or kept out: the add does not take it.
		case xy[0] != ' ' && xy != "??":
			return statusUnsure // staged: only diff-index can say what the index holds
		case under(path, excluded) || over(path, excluded):
			// The add may not take it, or only part of an untracked directory.
			return statusUnsure
		default:
			found = statusChange
		}
	}
	return found
}

// over reports whether one of paths lies inside dir.
func over(dir string, paths []string) bool {
	for _, p := range paths {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

// under reports whether path is one of dirs or inside one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// cleanLeftovers removes what an interrupted git command leaves in .git.
func (c *Checkout) cleanLeftovers() {
	gitDir := filepath.Join(c.Dir, ".git")
	_ = os.Remove(filepath.Join(gitDir, "index.lock"))
	_ = os.Remove(filepath.Join(gitDir, "HEAD.lock"))
	for _, pattern := range []string{"objects/pack/tmp_*", "objects/pack/.tmp-*", "objects/??/tmp_obj_*", "objects/incoming-*"} {
		found, _ := filepath.Glob(filepath.Join(gitDir, pattern))
		for _, f := range found {
			_ = os.RemoveAll(f)
		}
	}
}

// gitlinks lists the index's gitlink paths (mode 160000). It reads the index only:
// itself when it can (indexGitlinks), else with git ls-files.
func gitlinks(ctx context.Context, g *runner, dir string) ([]string, error) {
	if links, ok := indexGitlinks(filepath.Join(dir, ".git", "index")); ok {
		return links, nil
	}
	out, err := g.run(ctx, dir, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	var links []string
	for _, entry := range strings.Split(out, "\x00") {
		// "<mode> <object> <stage>\t<path>"
		if meta, path, ok := strings.Cut(entry, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			links = append(links, path)
		}
	}
	return links, nil
}

// Push sends branch to url (the project's repository).
func (c *Checkout) Push(ctx context.Context, url, branch string) error {
	if err := c.secure(branch); err != nil {
		return err
	}
	_, err := c.git().run(ctx, c.Dir, "push", "--quiet", "--", url, "HEAD:refs/heads/"+branch)
	return err
}
