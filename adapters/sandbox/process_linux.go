package sandbox

import "golang.org/x/sys/unix"

// memfd is a new memory file, closed on exec (a descriptor passed on purpose is dup'ed).
func memfd(name string) (int, error) { return unix.MemfdCreate(name, unix.MFD_CLOEXEC) }
