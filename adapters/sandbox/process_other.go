//go:build !linux

package sandbox

// memfd: agents run only on Linux (New answers ErrNeedsLinux), so nothing calls it.
func memfd(string) (int, error) { return -1, ErrNeedsLinux }
