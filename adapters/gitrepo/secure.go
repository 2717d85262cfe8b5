package gitrepo

import (
	"errors"
	"fmt"
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
//   - config is rewritten from scratch (hooks, fsmonitor, filters, ssh commands,
//     includes, extensions: none survive), and HEAD names the workspace branch.
//   - commondir and objects/info/alternates, which send git to other repositories, are
//     removed; info/exclude keeps the hub's /.context/ line.
//
// Command-line configuration (safeConfig) is a second layer. Agents' processes are gone
// when this runs (the sandbox ends them with the turn), so nothing changes .git between
// the check and git's run.

// hubConfig is the whole config of a checkout as the hub's git sees it.
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
		return fmt.Errorf("%w: %v", ErrUnsafeRepository, err)
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
			return fmt.Errorf("%w: %v", ErrUnsafeRepository, err)
		}
	}
	if err := replaceFile(filepath.Join(gitDir, "config"), hubConfig); err != nil {
		return err
	}
	if err := replaceFile(filepath.Join(gitDir, "HEAD"), "ref: refs/heads/"+branch+"\n"); err != nil {
		return err
	}
	exclude := filepath.Join(gitDir, "info", "exclude")
	old, _ := os.ReadFile(exclude)
	if !strings.Contains("\n"+string(old)+"\n", "\n"+excludeContext+"\n") {
		if err := os.MkdirAll(filepath.Dir(exclude), 0o755); err != nil {
			return err
		}
		return replaceFile(exclude, strings.TrimRight(string(old), "\n")+"\n"+excludeContext+"\n")
	}
	return nil
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
