//go:build unix

package gitrepo

import (
	"os"
	"syscall"
)

// openPlain opens path for reading without following a symlink in its last part and
// without waiting on a FIFO.
func openPlain(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// links is fi's count of hard links.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
