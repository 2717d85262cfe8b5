//go:build !unix

package gitrepo

import (
	"fmt"
	"os"
	"runtime"
)

// tryLock refuses: the import lock is a flock, which replicas on a shared volume honour,
// and this system has none.
func tryLock(*os.File) error {
	return fmt.Errorf("taking a workspace's import lock needs a Unix system (flock), not %s", runtime.GOOS)
}
