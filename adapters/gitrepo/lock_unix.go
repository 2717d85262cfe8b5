//go:build unix

package gitrepo

import (
	"os"
	"syscall"
)

// tryLock takes f's exclusive flock without waiting: EWOULDBLOCK when another holds it.
func tryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
