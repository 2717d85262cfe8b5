package assets

import (
	"io"
	"os"
)

// writeAtomic writes what write writes to path via a synced temporary file in dir
// and a rename, then syncs dir so the rename itself survives a crash. Concurrent
// writers of one path each use their own temporary file; the last rename wins with a
// complete file. A write that fails leaves nothing.
func writeAtomic(dir, path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	// CreateTemp already uses 0600; Chmod makes the mode independent of that detail.
	if err := tmp.Chmod(fileMode); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir flushes a directory entry change (the rename) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
