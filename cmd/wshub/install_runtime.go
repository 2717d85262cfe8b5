package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wshub/wshub/internal/nofollow"
)

// installRuntime copies this binary (static: it runs in any image) into dir as
// dir/wshub: the init container of a Pod in a project's own image puts it where the
// runtime's container runs it from (docs/kubernetes.md). The file is written new
// (never through a link already there) and renamed into place.
func installRuntime(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(self)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := filepath.Join(dir, ".wshub.new")
	_ = os.Remove(tmp)
	dst, err := nofollow.Open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("install the runtime into %s: %w", dir, err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "wshub"))
}
