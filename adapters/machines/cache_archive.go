package machines

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/wshub/wshub/core"
)

// The archives of environment caches: a tar, compressed with zstd, whose entries are
// named as the cache's paths name them ("node_modules/x", "~/.npm/y"). Packing reads
// what setup left; unpacking treats the archive as untrusted (a blob store is shared,
// and another hub's bug or an operator's mistake could hand it anything): it is
// extracted into a fresh staging directory of the workspace, entry by entry without
// following a symbolic link, then each path is moved into place if nothing is there
// yet. A refused archive leaves nothing behind.

// cacheDirs are a workspace's directories as its caches see them: the workspace's own
// directory, and its checkout and home named relative to it. Every file operation goes
// through an os.Root of the workspace's directory, so none leaves it.
type cacheDirs struct {
	root           string
	checkout, home string
}

func (m *LocalMachines) cacheDirs(ws *core.Workspace) cacheDirs {
	return cacheDirs{root: m.root(ws), checkout: "checkout", home: "home"}
}

// local names a cache path's place under the root: its checkout or home.
func (d cacheDirs) local(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return path.Join(d.home, rest)
	}
	return path.Join(d.checkout, p)
}

// errCacheRefused words why an archive is not restored.
type errCacheRefused struct{ why string }

func (e *errCacheRefused) Error() string { return "the archive is refused: " + e.why }

func refused(format string, args ...any) error {
	return &errCacheRefused{why: fmt.Sprintf(format, args...)}
}

// OpenKeyFile opens a key file of the checkout, through no symbolic link.
func (m *LocalMachines) OpenKeyFile(ws *core.Workspace, name string) (io.ReadCloser, error) {
	root, err := os.OpenRoot(m.root(ws))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	d := m.cacheDirs(ws)
	rel := d.local(name)
	if err := realDirs(root, path.Dir(rel), false); err != nil {
		if errors.Is(err, fs.ErrNotExist) || isRefused(err) {
			return nil, core.ErrNoRows
		}
		return nil, err
	}
	fi, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
		return nil, core.ErrNoRows
	}
	if err != nil {
		return nil, err
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	// The name was a regular file when looked at; it still is the same one.
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		f.Close()
		return nil, core.ErrNoRows
	}
	return f, nil
}

func isRefused(err error) bool {
	var r *errCacheRefused
	return errors.As(err, &r)
}

// realDirs checks that every directory of dir (slash-separated, relative to root) is
// a real directory, no symbolic link; create makes the missing ones.
func realDirs(root *os.Root, dir string, create bool) error {
	return realDirsSeen(root, dir, create, nil)
}

// realDirsSeen is realDirs skipping the directories seen holds, and adding those it
// checks or makes (seen nil: none).
func realDirsSeen(root *os.Root, dir string, create bool, seen map[string]bool) error {
	if dir == "." || dir == "" || seen[dir] {
		return nil
	}
	at := ""
	for part := range strings.SplitSeq(dir, "/") {
		at = path.Join(at, part)
		if seen[at] {
			continue
		}
		fi, err := root.Lstat(at)
		switch {
		case errors.Is(err, fs.ErrNotExist) && create:
			if err := root.Mkdir(at, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !fi.IsDir():
			return refused("%s is not a directory", at)
		}
		if seen != nil {
			seen[at] = true
		}
	}
	return nil
}

// PackCache archives the paths into a temporary file of the workspace's directory.
func (m *LocalMachines) PackCache(ctx context.Context, ws *core.Workspace, paths []string, limits core.CacheLimits) (*core.CachePack, error) {
	return packCache(ctx, m.cacheDirs(ws), paths, limits)
}

// UnpackCache restores an archive into the workspace's checkout and home.
func (m *LocalMachines) UnpackCache(ctx context.Context, ws *core.Workspace, paths []string, r io.Reader, limits core.CacheLimits) (core.CacheStats, error) {
	return unpackCache(ctx, m.cacheDirs(ws), paths, r, limits)
}

// PackCacheIn is PackCache for a machine whose directory dir holds its checkout and
// home as a local workspace's does (`wshub runtime`'s).
func PackCacheIn(ctx context.Context, dir string, paths []string, limits core.CacheLimits) (*core.CachePack, error) {
	return packCache(ctx, cacheDirs{root: dir, checkout: "checkout", home: "home"}, paths, limits)
}

// UnpackCacheIn is UnpackCache for such a machine.
func UnpackCacheIn(ctx context.Context, dir string, paths []string, r io.Reader, limits core.CacheLimits) (core.CacheStats, error) {
	return unpackCache(ctx, cacheDirs{root: dir, checkout: "checkout", home: "home"}, paths, r, limits)
}

// tempArchive is a packed archive on disk, removed when closed.
type tempArchive struct{ *os.File }

func (t tempArchive) Close() error {
	err := t.File.Close()
	return errors.Join(err, os.Remove(t.Name()))
}

// zstdLevel trades the first workspace's save for CPU: restoring is as fast at any
// level, and the hub shares its cores with the agents.
const zstdLevel = zstd.SpeedFastest

func packCache(ctx context.Context, d cacheDirs, paths []string, limits core.CacheLimits) (_ *core.CachePack, err error) {
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := os.CreateTemp(d.root, ".cache-*.tar.zst")
	if err != nil {
		return nil, fmt.Errorf("make the archive: %w", err)
	}
	tmp := tempArchive{f}
	defer func() {
		if err != nil {
			tmp.Close()
		}
	}()
	zw, err := zstd.NewWriter(&cappedWriter{w: f, left: limits.MaxArchiveBytes}, zstd.WithEncoderLevel(zstdLevel),
		zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	var st core.CacheStats
	for _, p := range paths {
		if err = packPath(ctx, root, d.local(p), p, tw, &st, limits); err != nil {
			break
		}
	}
	if err == nil {
		err = tw.Close()
	}
	if err = errors.Join(err, zw.Close()); err != nil {
		if errors.Is(err, errArchiveTooLarge) {
			return nil, fmt.Errorf("its archive would be larger than the %d bytes the hub keeps for a project", limits.MaxArchiveBytes)
		}
		return nil, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		return nil, err
	}
	return &core.CachePack{CacheStats: st, Archive: tmp, Size: size}, nil
}

// cappedWriter refuses what would take its writes past left bytes (left 0: no cap).
type cappedWriter struct {
	w    io.Writer
	left int64
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.left > 0 {
		if int64(len(p)) > c.left {
			return 0, errArchiveTooLarge
		}
		c.left -= int64(len(p))
	}
	return c.w.Write(p)
}

// errArchiveTooLarge: the archive grew past its cap while it was written.
var errArchiveTooLarge = errors.New("archive too large")

// packPath adds one cache path (at local under root) to the archive as name, walking
// it without following a symbolic link. A path that does not exist adds nothing.
func packPath(ctx context.Context, root *os.Root, local, name string, tw *tar.Writer, st *core.CacheStats, limits core.CacheLimits) error {
	if err := realDirs(root, path.Dir(local), false); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if isRefused(err) {
			return fmt.Errorf("%s lies under a symbolic link or a file", name)
		}
		return err
	}
	fi, err := root.Lstat(local)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		// Walking would follow it: the path itself is kept as the link it is.
		target, err := root.Readlink(local)
		if err != nil {
			return err
		}
		st.Files++
		st.Entries++
		return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777, ModTime: fi.ModTime()})
	}
	return fs.WalkDir(root.FS(), local, func(at string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		entry := name + strings.TrimPrefix(at, local)
		hdr := &tar.Header{Name: entry, Mode: int64(fi.Mode().Perm()), ModTime: fi.ModTime()}
		switch {
		case fi.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, entry+"/"
		case fi.Mode().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
			st.Files++
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(at)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
			st.Files++
		default:
			return nil // sockets, pipes, devices: nothing to keep
		}
		st.Entries++
		st.Bytes += hdr.Size
		if st.Entries > limits.MaxEntries || st.Bytes > limits.MaxBytes {
			return fmt.Errorf("it holds more than %d files or %d bytes", limits.MaxEntries, limits.MaxBytes)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := root.Open(at)
		if err != nil {
			return err
		}
		defer f.Close()
		// A file that grew since its Lstat is cut at the size the header says; one
		// that shrank fails the archive (tar refuses a short entry).
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
}

// maxCacheLinkTarget bounds a symbolic link's target in an archive.
const maxCacheLinkTarget = 4096

// unpackCache extracts r into a staging directory, then moves each path into place.
func unpackCache(ctx context.Context, d cacheDirs, paths []string, r io.Reader, limits core.CacheLimits) (_ core.CacheStats, err error) {
	var st core.CacheStats
	stage, err := os.MkdirTemp(d.root, ".cache-restore-*")
	if err != nil {
		return st, fmt.Errorf("make a staging directory: %w", err)
	}
	defer os.RemoveAll(stage)
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return st, err
	}
	defer root.Close()
	staged := func(p string) string { return path.Join(filepath.Base(stage), d.local(p)) }
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
	if err != nil {
		return st, err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	w := &stager{root: root, seen: map[string]bool{}}
	defer w.close()
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, refused("it is not a cache archive (%v)", err)
		}
		name, err := cacheEntryName(hdr.Name, paths)
		if err != nil {
			return st, err
		}
		st.Entries++
		if st.Entries > limits.MaxEntries {
			return st, refused("it holds more than %d entries", limits.MaxEntries)
		}
		if err := w.entry(staged(name), hdr, tr, &st, limits); err != nil {
			if isRefused(err) {
				return st, err
			}
			return st, fmt.Errorf("%s could not be written", name)
		}
	}
	// The home is the agent runner's to make, private; a cache of it may come first.
	if err := root.Mkdir(d.home, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return st, err
	}
	// Every place is checked before anything moves, so a refusal leaves nothing.
	for _, p := range paths {
		if err := cachePlace(root, staged(p), d.local(p)); err != nil {
			if isRefused(err) {
				return st, refused("%s lies under a symbolic link or a file in the workspace", p)
			}
			return st, err
		}
	}
	for _, p := range paths {
		moved, err := placeCachePath(root, staged(p), d.local(p))
		if err != nil {
			return st, err
		}
		if !moved {
			st.Skipped = append(st.Skipped, p)
		}
	}
	return st, nil
}

// cacheEntryName checks an entry's name: relative, clean, no "..", and inside one of
// the cache's paths. It returns the name without a directory's trailing slash.
func cacheEntryName(name string, paths []string) (string, error) {
	trimmed := strings.TrimSuffix(name, "/")
	rest := strings.TrimPrefix(trimmed, "~/")
	if trimmed == "" || strings.ContainsAny(name, "\x00\\") || path.IsAbs(rest) || path.Clean(rest) != rest ||
		rest == ".." || strings.HasPrefix(rest, "../") {
		return "", refused("the entry %q is not a clean relative path", cutName(name))
	}
	for _, p := range paths {
		if trimmed == p || strings.HasPrefix(trimmed, p+"/") {
			return trimmed, nil
		}
	}
	return "", refused("the entry %q lies outside the cache's paths", cutName(name))
}

func cutName(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// stager writes an archive's entries into the staging directory. Nothing else writes
// there and nothing is removed from it while it works, so it remembers the
// directories it checked or made, and keeps the last one open: a file costs one open,
// not one per directory of its path.
type stager struct {
	root *os.Root
	seen map[string]bool
	dir  string
	at   *os.Root // dir, open
}

func (s *stager) close() {
	if s.at != nil {
		s.at.Close()
	}
}

// in returns dir, open, its directories checked to be real ones (made as needed).
func (s *stager) in(dir string) (*os.Root, error) {
	if s.at != nil && s.dir == dir {
		return s.at, nil
	}
	if err := realDirsSeen(s.root, dir, true, s.seen); err != nil {
		if isRefused(err) {
			return nil, refused("an entry lies under a symbolic link or a file")
		}
		return nil, err
	}
	at, err := s.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	s.close()
	s.dir, s.at = dir, at
	return at, nil
}

// entry writes one entry at local (in the staging directory); nothing is replaced.
func (s *stager) entry(local string, hdr *tar.Header, r io.Reader, st *core.CacheStats, limits core.CacheLimits) error {
	dir, err := s.in(path.Dir(local))
	if err != nil {
		return err
	}
	name := path.Base(local)
	mode := fs.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		fi, err := dir.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = dir.Mkdir(name, mode|0o700)
		case err == nil && !fi.IsDir():
			err = refused("a directory's name is already a file or link")
		}
		if err == nil {
			s.seen[local] = true
		}
		return err
	case tar.TypeReg:
		st.Bytes += hdr.Size
		if hdr.Size < 0 || st.Bytes > limits.MaxBytes {
			return refused("it holds more than %d bytes", limits.MaxBytes)
		}
		// O_EXCL: a new file, never one there or a link's target.
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			return refused("an entry appears twice")
		}
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, r, hdr.Size)
		if err = errors.Join(err, f.Close()); err != nil {
			return err
		}
		st.Files++
		mtime := hdr.ModTime
		if mtime.IsZero() {
			mtime = time.Now()
		}
		return dir.Chtimes(name, mtime, mtime)
	case tar.TypeSymlink:
		if hdr.Linkname == "" || len(hdr.Linkname) > maxCacheLinkTarget || strings.ContainsRune(hdr.Linkname, 0) {
			return refused("a symbolic link's target is empty or too long")
		}
		err := dir.Symlink(hdr.Linkname, name)
		if errors.Is(err, fs.ErrExist) {
			return refused("an entry appears twice")
		}
		if err == nil {
			st.Files++
		}
		return err
	}
	return refused("the entry %q is not a file, directory or symbolic link", cutName(hdr.Name))
}

// cachePlace makes the directories of a staged path's place in the checkout or home,
// if the archive held it: they must be real ones, so that a checkout whose
// node_modules' parent is a symbolic link gets nothing through it.
func cachePlace(root *os.Root, staged, local string) error {
	if _, err := root.Lstat(staged); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return realDirs(root, path.Dir(local), true)
}

// placeCachePath moves a staged path to its place, if the archive held it and nothing
// is there yet; moved is false when something is.
func placeCachePath(root *os.Root, staged, local string) (moved bool, err error) {
	if _, err := root.Lstat(staged); errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if _, err := root.Lstat(local); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, root.Rename(staged, local)
}
