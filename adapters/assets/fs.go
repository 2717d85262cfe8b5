// Package assets stores attachment bytes. The bytes arrive already sealed, so the
// store only has to keep them durable and out of reach of other local users.
package assets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wshub/wshub/core"
)

// FS is a core.BlobStore on a local directory: one file per key, a key's '/' becoming a
// subdirectory. It is safe for concurrent use, including concurrent Puts of one key.
type FS struct {
	dir string
}

var _ core.BlobStore = (*FS)(nil)

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// NewFS returns a store rooted at dir, creating it (mode 0700) if needed.
func NewFS(dir string) (*FS, error) {
	if dir == "" {
		return nil, errors.New("assets: empty directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	if err := os.MkdirAll(abs, dirMode); err != nil {
		return nil, fmt.Errorf("assets: create store directory: %w", err)
	}
	return &FS{dir: abs}, nil
}

// Put stores data under key, replacing any previous value. A reader never sees a
// partial file: the bytes go to a temporary file in the same directory, are synced,
// and are renamed over the key (PutFrom).
func (s *FS) Put(ctx context.Context, key string, data []byte) error {
	return s.PutFrom(ctx, key, bytes.NewReader(data), int64(len(data)))
}

// Get returns the bytes stored under key; a missing key is core.ErrNoRows.
func (s *FS) Get(ctx context.Context, key string) (_ []byte, err error) {
	defer wrap(&err, "get", key)
	path, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, core.ErrNoRows
	}
	return data, err
}

// Delete removes key. Deleting a missing key succeeds: callers delete to clean up
// after a failure and should not have to know whether the Put got that far.
func (s *FS) Delete(ctx context.Context, key string) (err error) {
	defer wrap(&err, "delete", key)
	path, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The key's subdirectory is left in place: removing it could race a concurrent
	// Put of a sibling key, and an empty directory costs nothing.
	return nil
}

// wrap annotates an error once with the operation and key (keys carry no secrets).
func wrap(errp *error, op, key string) {
	if *errp != nil {
		*errp = fmt.Errorf("assets: %s %q: %w", op, key, *errp)
	}
}
