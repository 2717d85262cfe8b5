//go:build unix

// Package nofollow opens a file only if its last element is not a symbolic link, so a
// path inside a checkout an agent controls cannot be swapped for a link to a file of
// the hub's. Unix systems say so with O_NOFOLLOW; Windows has no such flag, and there
// Open refuses rather than open without the check.
package nofollow

import (
	"os"
	"syscall"
)

// Open is os.OpenFile with O_NOFOLLOW: a symbolic link at name fails (ELOOP).
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag|syscall.O_NOFOLLOW, perm)
}
