//go:build !unix

package nofollow

import (
	"fmt"
	"os"
	"runtime"
)

// Open refuses: without O_NOFOLLOW a link could be followed unseen.
func Open(name string, flag int, perm os.FileMode) (*os.File, error) {
	return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("opening a file without following a symbolic link needs a Unix system, not %s", runtime.GOOS)}
}
