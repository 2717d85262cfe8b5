package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A workspace checkout belongs to its agent: between turns, everything in it,
// .git included, may have been written by untrusted code. Before each of its own git
// commands on a checkout, the hub puts back the parts of .git that decide what git
// runs or where it writes, so that the repository's content is the agent's and its
// behaviour is the hub's:
//
//   - .git must be a real directory (not a symlink, not a "gitdir:" file pointing at
//     another repository), with no symlink anywhere inside it: git writes objects, refs
//     and the index under .git, and a symlinked objects/ab would make the hub write
//     wherever it points, with the hub's rights.
//   - config is restored from the hub's copy (hooks, fsmonitor, filters, ssh
//     commands, includes: none survive), and HEAD names the workspace branch. The
//     copy is written at Create from the hub's own fresh clone, so it keeps what the
//     repository needs to be read (extensions.objectformat for a SHA-256 project),
//     and it is kept beside the checkout, where the sandbox does not show it.
//   - commondir and objects/info/alternates, which send git to other repositories, are
//     removed; info/exclude keeps the hub's /.context/ line.
//   - hooks and attributes are left as the agent made them: hooks are off through
//     safeConfig, and attributes (.gitattributes, info/attributes) only name filter,
//     diff and merge drivers, which nothing defines in the hub's config.
//   - repositories embedded in the checkout keep their own config: the hub's git never
//     runs inside them (CommitAll).
//
// Command-line configuration (safeConfig) is a second layer. Agents' processes are gone
// when this runs (the sandbox ends them with the turn), so nothing changes .git between
// the check and git's run.

// hubConfig is the whole config of a checkout as the hub's git sees it, but for
// the format of the repository (configCopy).
const hubConfig = `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[user]
	name = wshub
	email = wshub@localhost
`

// excludeContext keeps the files the hub places for the agent (attachments) out of
// the work.
const excludeContext = "/.context/"

// ErrUnsafeRepository: the checkout's .git is shaped to make the hub's git act
// elsewhere; the hub runs no git in it.
var ErrUnsafeRepository = errors.New("the checkout's repository is unsafe for the hub's git")

func (c *Checkout) secure(branch string) error {
	gitDir := filepath.Join(c.Dir, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsafeRepository, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: .git is not a directory", ErrUnsafeRepository)
	}
	err = filepath.WalkDir(gitDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(c.Dir, path)
			return fmt.Errorf("%w: %s is a symlink", ErrUnsafeRepository, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range []string{"commondir", filepath.Join("objects", "info", "alternates"), filepath.Join("objects", "info", "http-alternates")} {
		if err := os.Remove(filepath.Join(gitDir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrUnsafeRepository, err)
		}
	}
	config, err := os.ReadFile(c.configCopy())
	if errors.Is(err, fs.ErrNotExist) {
		// A checkout made before the hub kept a copy: the plain config, as it had then.
		config, err = []byte(hubConfig), nil
	}
	if err != nil {
		return fmt.Errorf("read the hub's copy of the checkout's config: %w", err)
	}
	if err := ensureFile(filepath.Join(gitDir, "config"), string(config)); err != nil {
		return err
	}
	if err := ensureFile(filepath.Join(gitDir, "HEAD"), "ref: refs/heads/"+branch+"\n"); err != nil {
		return err
	}
	exclude := filepath.Join(gitDir, "info", "exclude")
	old, _, _ := readPlainFile(exclude, maxExclude)
	if !strings.Contains("\n"+string(old)+"\n", "\n"+excludeContext+"\n") {
		if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
			return err
		}
		return replaceFile(exclude, strings.TrimRight(string(old), "\n")+"\n"+excludeContext+"\n")
	}
	return nil
}

// configCopy is the hub's copy of the checkout's config: beside the checkout, in the
// workspace's directory, which the agent's sandbox does not show.
func (c *Checkout) configCopy() string { return c.Dir + ".gitconfig" }

// formatKeys are the settings of a fresh clone's config that say how to read the
// repository; the rest of the hub's config is hubConfig.
var formatKeys = `^(core\.repositoryformatversion|extensions\..*)$`

// writeConfigCopy writes the hub's copy of the config for the fresh clone at dir
// (made by the hub, not yet seen by any agent): hubConfig with the clone's format.
func (c *Checkout) writeConfigCopy(ctx context.Context, g *runner, dir string) error {
	out, err := g.run(ctx, "", "config", "--file", filepath.Join(dir, ".git", "config"), "--null", "--get-regexp", formatKeys)
	var ge *Error
	if err != nil && !(errors.As(err, &ge) && ge.ExitCode == 1) { // 1: no such key
		return err
	}
	tmp := c.configCopy() + ".tmp"
	if err := os.WriteFile(tmp, []byte(hubConfig), 0o600); err != nil {
		return fmt.Errorf("write the hub's copy of the checkout's config: %w", err)
	}
	defer os.Remove(tmp) // a no-op once renamed
	for _, kv := range strings.Split(out, "\x00") {
		key, value, ok := strings.Cut(kv, "\n")
		if !ok {
			continue
		}
		if _, err := g.run(ctx, "", "config", "--file", tmp, "--", key, value); err != nil {
			return err
		}
	}
	return os.Rename(tmp, c.configCopy())
}

// maxExclude bounds what is read of info/exclude: the agent may have made it anything.
const maxExclude = 1 << 20

// ensureFile makes path a plain file holding content, leaving it alone when it is one
// already: a turn then writes nothing in .git (two files renamed per turn cost more
// than the rest of the check). A file linked elsewhere too is not trusted to keep its
// content: it is replaced.
func ensureFile(path, content string) error {
	if b, fi, ok := readPlainFile(path, int64(len(content))); ok && links(fi) == 1 && string(b) == content {
		return nil
	}
	return replaceFile(path, content)
}

// readPlainFile reads path when it is a regular file of at most max bytes, never
// following a symlink nor waiting on a FIFO the agent left in its place; ok is false
// otherwise.
func readPlainFile(path string, max int64) (b []byte, fi os.FileInfo, ok bool) {
	f, err := openPlain(path)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, nil, false
	}
	b = make([]byte, fi.Size()+1) // one more, to see a file that grew since the stat
	n, err := io.ReadFull(f, b)
	if err != io.ErrUnexpectedEOF && err != io.EOF || int64(n) != fi.Size() {
		return nil, nil, false
	}
	return b[:n], fi, true
}

// replaceFile writes content to path through a new file renamed over it.
func replaceFile(path, content string) error {
	tmp := path + ".wshub.tmp"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(content)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
