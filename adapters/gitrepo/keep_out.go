package gitrepo

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/wshub/wshub/internal/nofollow"
)

// Files a workspace's setup wrote stay out of its turn commits (a project's
// environment, core/env_setup.go): what git does not track in the checkout when setup
// ends (node_modules, a virtualenv, build output), and the environment's cached paths
// unless the repository tracks them. The list is kept beside the checkout, where the
// sandbox does not show it, so no agent can take a line out of it.

// maxKeptOut bounds the list; git collapses an untracked directory into one entry.
const maxKeptOut = 1000

// keepOutFile is the hub's list, one path a line.
func (c *Checkout) keepOutFile() string { return c.Dir + ".keepout" }

// KeepOut records the checkout's untracked files now, and the paths of cached that
// the repository does not track, as left out of every later commit.
func (c *Checkout) KeepOut(ctx context.Context, branch string, cached []string) error {
	if err := c.secure(branch); err != nil {
		return err
	}
	g := c.git()
	out, err := g.run(ctx, c.Dir, "ls-files", "-z", "--others", "--exclude-standard", "--directory", "--no-empty-directory")
	if err != nil {
		return err
	}
	var paths []string
	for _, p := range strings.Split(out, "\x00") {
		if p = strings.TrimSuffix(p, "/"); p != "" && p != ".context" {
			paths = append(paths, p)
		}
	}
	for _, p := range cached {
		tracked, err := g.run(ctx, c.Dir, "ls-files", "-z", "--", ":(literal)"+p)
		if err != nil {
			return err
		}
		if tracked == "" {
			paths = append(paths, p)
		}
	}
	if len(paths) > maxKeptOut {
		paths = paths[:maxKeptOut]
	}
	var b strings.Builder
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			continue // cannot be a line; git add takes it like any file
		}
		b.WriteString(p + "\n")
	}
	if err := replaceFile(c.keepOutFile(), b.String()); err != nil {
		return fmt.Errorf("keep the setup's files out of commits: %w", err)
	}
	return nil
}

// keptOut reads the list (none before a setup).
func (c *Checkout) keptOut() ([]string, error) {
	f, err := nofollow.Open(c.keepOutFile(), os.O_RDONLY, 0)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < maxKeptOut {
		if l := sc.Text(); l != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}
