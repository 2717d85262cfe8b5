package gitrepo

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A repository embedded in a checkout is committed as a gitlink: git records the
// commit its HEAD names, reading HEAD and the ref it points to with the hub's rights.
// An agent can make those files symlinks to another checkout's refs, or write there
// the id of a commit it saw elsewhere, and the hub's commit would then record another
// account's head. So before each commit the hub reads every embedded repository
// itself, without following a symlink, and leaves out of the commit (with the reason)
// any that is not wholly inside the checkout: a .git that is a symlink or holds one,
// a gitdir file that points out of the checkout, or a head that is not an object the
// repository holds (loose, or in one of its own packs: not through alternates).

// LeftOut is a path of the checkout the hub did not commit, and why.
type LeftOut struct {
	Path, Reason string
}

func (l LeftOut) String() string { return l.Path + ": " + l.Reason }

// maxNestedScan bounds the walk for embedded repositories: a checkout with more
// entries than this is not committed, since what it holds past them is unchecked.
const maxNestedScan = 2_000_000

// scanCheckout walks the checkout at root once, for embedded repositories the hub
// must not commit (nested) and for files larger than maxFile (big, relative paths).
// used adds up the sizes of every file under root, .git included, and sum (nil: none)
// hashes what the walk saw (CleanTrees).
func scanCheckout(root string, maxFile int64, sum *treeSum) (nested []LeftOut, big []string, used int64, err error) {
	seen := 0
	var repos []string // every embedded repository: its files are its own, not the commit's
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			sum.mix(path, "unreadable")
			return nil // unreadable: git will not read it either
		}
		if seen++; seen > maxNestedScan {
			return fmt.Errorf("the checkout holds more than %d files and directories: too many to check for embedded repositories", maxNestedScan)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			fi, _ := d.Info() // the link's own: a new target is a new link
			sum.add(path, d, fi)
		case !d.Type().IsRegular():
			sum.add(path, d, nil) // a directory's content is its entries, each hashed
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			sum.add(path, d, fi)
			if err != nil {
				return nil
			}
			used += fi.Size()
			if fi.Size() > maxFile && d.Name() != ".git" && !strings.HasPrefix(path, filepath.Join(root, ".git")+string(filepath.Separator)) {
				rel, _ := filepath.Rel(root, path)
				big = append(big, filepath.ToSlash(rel))
			}
			if d.Name() != ".git" {
				return nil
			}
		}
		if d.Name() != ".git" || path == filepath.Join(root, ".git") {
			return nil // the checkout's own .git is walked for its size only
		}
		repo := filepath.Dir(path)
		rel, _ := filepath.Rel(root, repo)
		repos = append(repos, filepath.ToSlash(rel)+"/")
		if reason := nestedReason(root, path, d); reason != "" {
			nested = append(nested, LeftOut{Path: filepath.ToSlash(rel), Reason: reason})
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	big = slices.DeleteFunc(big, func(f string) bool {
		return slices.ContainsFunc(repos, func(r string) bool { return strings.HasPrefix(f, r) })
	})
	return nested, big, used, err
}

// nestedReason says why the embedded repository whose .git is at gitPath may not be
// committed, or "" when it may.
func nestedReason(root, gitPath string, d fs.DirEntry) string {
	gitDir := gitPath
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		return "an embedded repository whose .git is a symlink"
	case d.Type().IsRegular():
		b, err := os.ReadFile(gitPath)
		target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if err != nil || !ok {
			return "an embedded repository whose .git file is not a gitdir line"
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(gitPath), target)
		}
		target = filepath.Clean(target)
		if !inside(target, root) || hasSymlink(root, target) {
			return "an embedded repository whose .git points out of the checkout"
		}
		gitDir = target
	case !d.IsDir():
		return "an embedded repository whose .git is not a directory"
	}
	var link string
	err := filepath.WalkDir(gitDir, func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.Type()&fs.ModeSymlink != 0 {
			link = path
			return fs.SkipAll
		}
		return err
	})
	switch {
	case err != nil:
		return "an embedded repository whose .git cannot be read"
	case link != "":
		return "an embedded repository whose .git holds a symlink"
	}
	head, err := nestedHead(gitDir)
	if err != nil {
		return "an embedded repository whose head cannot be read"
	}
	if head == "" {
		return "" // no commit yet: git records nothing
	}
	if !hasObject(gitDir, head) {
		return "an embedded repository whose head is not an object it holds"
	}
	return ""
}

// hasSymlink reports whether any directory from root (exclusive) down to path is a
// symlink or missing.
func hasSymlink(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return true
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// What is read of an embedded repository's files, which are the agent's.
const (
	maxRefFile    = 4 << 10
	maxPackedRefs = 64 << 20
)

// readRepoFile reads a file of an embedded repository as readPlainFile does: an
// error when it is not a regular file of at most max bytes (fs.ErrNotExist when there
// is none).
func readRepoFile(path string, max int64) ([]byte, error) {
	if _, err := os.Lstat(path); err != nil {
		return nil, err
	}
	b, _, ok := readPlainFile(path, max)
	if !ok {
		return nil, fmt.Errorf("%s is not a file of at most %d bytes", filepath.Base(path), max)
	}
	return b, nil
}

// nestedHead resolves HEAD of the repository at gitDir by reading its files: a
// detached id, or a ref in its own file or in packed-refs ("" when the ref has no
// commit yet, refID).
func nestedHead(gitDir string) (string, error) {
	b, err := readRepoFile(filepath.Join(gitDir, "HEAD"), maxRefFile)
	if err != nil {
		return "", err
	}
	head := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if !symbolic {
		return checkID(head)
	}
	return refID(gitDir, ref)
}

// refID resolves ref (refs/...) of the repository at gitDir by reading its files: its
// own file, else its line in packed-refs ("" when it has neither). A ref holding
// another ref's name is not followed: it is an error.
func refID(gitDir, ref string) (string, error) {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return "", fmt.Errorf("a ref named %q", ref)
	}
	if b, err := readRepoFile(filepath.Join(gitDir, filepath.FromSlash(ref)), maxRefFile); err == nil {
		return checkID(strings.TrimSpace(string(b)))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	packed, err := readRepoFile(filepath.Join(gitDir, "packed-refs"), maxPackedRefs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for l := range strings.Lines(string(packed)) {
		if id, name, ok := strings.Cut(strings.TrimSpace(l), " "); ok && name == ref {
			return checkID(id)
		}
	}
	return "", nil
}

func checkID(s string) (string, error) {
	if _, err := hex.DecodeString(s); err != nil || len(s) != 40 && len(s) != 64 {
		return "", fmt.Errorf("%.80q is not an object id", s)
	}
	return strings.ToLower(s), nil
}

// hasObject reports whether the repository at gitDir holds id itself: a loose object,
// or an entry of one of its pack indexes (version 2).
func hasObject(gitDir, id string) bool {
	objects := filepath.Join(gitDir, "objects")
	if fi, err := os.Lstat(filepath.Join(objects, id[:2], id[2:])); err == nil && fi.Mode().IsRegular() {
		return true
	}
	raw, _ := hex.DecodeString(id)
	idxs, _ := filepath.Glob(filepath.Join(objects, "pack", "*.idx"))
	for _, idx := range idxs {
		if idxHas(idx, raw) {
			return true
		}
	}
	return false
}

// idxHas looks id up in a pack index (v2: magic, version, 256 fan-out counts, then
// the sorted ids), by binary search within id's fan-out bucket.
func idxHas(path string, id []byte) bool {
	f, err := openPlain(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8 + 256*4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:8], []byte("\xfftOc\x00\x00\x00\x02")) {
		return false
	}
	fan := func(i int) int64 { return int64(binary.BigEndian.Uint32(head[8+4*i:])) }
	lo, hi := int64(0), fan(int(id[0]))
	if id[0] > 0 {
		lo = fan(int(id[0]) - 1)
	}
	entry := make([]byte, len(id))
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := f.ReadAt(entry, int64(len(head))+mid*int64(len(id))); err != nil {
			return false
		}
		switch c := bytes.Compare(entry, id); {
		case c == 0:
			return true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}

// inside reports whether path is below dir (both clean and absolute).
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
