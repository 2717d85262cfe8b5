//go:build !unix

package gitrepo

import "os"

// openPlain opens path: this system has no O_NOFOLLOW, and runs no workspace's agent
// (the sandbox is Linux's), so the checkout is not an agent's.
func openPlain(path string) (*os.File, error) { return os.Open(path) }

// links is 1: the link count is not in this system's FileInfo.
func links(os.FileInfo) uint64 { return 1 }
