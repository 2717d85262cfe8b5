//go:build linux

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// etcView is a hub-private directory that a sandbox's /etc is, bound read-only in one
// mount: copies of the small files of etcPaths, kept equal to the host's, and empty
// directories and files where the rest is bound on top (etcPaths' directories, the
// operator's WSHUB_SANDBOX_READONLY paths under /etc). One bind where there was one per
// file: bubblewrap (0.8) reads the whole mount table again for every bind it makes, and
// the 19 files of /etc were two thirds of a sandbox's binds (2.4 ms of CPU a sandbox).
//
// A copy is refreshed when the host's file changes (its identity, size or times), at
// the next sandbox's start: a sandbox sees /etc as it was when it, or its workspace's
// last turn, started; a change to the host's /etc shows in running sandboxes too (the
// copy is renamed into the bound directory).
type etcView struct {
	dir string
	// under are the operator's read-only paths below /etc, bound on top of the view.
	under []string

	mu     sync.Mutex
	copied map[string]fileID // a host file -> the identity its copy was made from
}

// maxEtcCopy bounds what is copied: a larger file (none of etcPaths' is) is bound.
const maxEtcCopy = 1 << 20

// fileID identifies a version of a file.
type fileID struct {
	dev, ino             uint64
	size, mtime, ctime   int64
	mtimeNsec, ctimeNsec int64
}

func idOf(st *syscall.Stat_t) fileID {
	return fileID{dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Sec, mtimeNsec: st.Mtim.Nsec, ctime: st.Ctim.Sec, ctimeNsec: st.Ctim.Nsec}
}

// newEtcView makes the view's directory under stateDir; readOnly are the operator's
// paths, of which those under /etc get a place in the view to be bound on.
func newEtcView(stateDir string, readOnly []string) (*etcView, error) {
	v := &etcView{dir: filepath.Join(stateDir, "etc"), copied: map[string]fileID{}}
	for _, p := range readOnly {
		if within(p, "/etc") && p != "/etc" {
			v.under = append(v.under, p)
		}
	}
	if err := os.RemoveAll(v.dir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(v.dir, 0o755); err != nil {
		return nil, err
	}
	return v, nil
}

// refresh brings the view up to date with the host's /etc and says what to bind.
func (v *etcView) refresh() (etcMounts, error) {
	if v == nil {
		return etcMounts{}, errors.ErrUnsupported
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	m := etcMounts{view: v.dir}
	for _, p := range etcPaths {
		dst := filepath.Join(v.dir, strings.TrimPrefix(p, "/etc/"))
		var st syscall.Stat_t
		err := syscall.Stat(p, &st)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			delete(v.copied, p)
			if err := os.RemoveAll(dst); err != nil {
				return m, err
			}
			if p == "/etc/resolv.conf" {
				// Its place is kept: a "full" sandbox binds its own resolv.conf there.
				if err := placeFile(dst); err != nil {
					return m, err
				}
			}
		case err != nil:
			return m, err
		case st.Mode&syscall.S_IFMT == syscall.S_IFDIR:
			delete(v.copied, p)
			if err := placeDir(dst); err != nil {
				return m, err
			}
			m.dirs = append(m.dirs, p)
		case st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > maxEtcCopy:
			delete(v.copied, p)
			if err := placeFile(dst); err != nil {
				return m, err
			}
			m.bound = append(m.bound, p)
		default:
			id := idOf(&st)
			if v.copied[p] == id {
				continue
			}
			delete(v.copied, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return m, err
			}
			if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
				if err := os.RemoveAll(dst); err != nil {
					return m, err
				}
			}
			if err := writeRenamed(dst, b); err != nil {
				return m, err
			}
			v.copied[p] = id
		}
	}
	for _, p := range v.under {
		fi, err := os.Stat(p)
		if err != nil {
			continue // bound with the others, where a missing path fails the sandbox as it did
		}
		dst := filepath.Join(v.dir, strings.TrimPrefix(p, "/etc/"))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return m, err
		}
		if fi.IsDir() {
			err = placeDir(dst)
		} else {
			err = placeFile(dst)
		}
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

// placeDir makes dst an empty directory unless it is one.
func placeDir(dst string) error {
	if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
		return nil
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Mkdir(dst, 0o755)
}

// placeFile makes dst an empty file to bind on unless it is a file.
func placeFile(dst string) error {
	if fi, err := os.Lstat(dst); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return writeRenamed(dst, nil)
}

// writeRenamed writes b to dst through a file renamed over it, so that a sandbox
// reading dst sees the old content or the new, never a part.
func writeRenamed(dst string, b []byte) error {
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
