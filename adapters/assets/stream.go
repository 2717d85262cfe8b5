package assets

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wshub/wshub/core"
)

// PutFrom stores the size bytes r holds under key, streamed through a temporary file
// renamed into place: a reader never sees part of a value.
func (s *FS) PutFrom(ctx context.Context, key string, r io.Reader, size int64) (err error) {
	defer wrap(&err, "put", key)
	path, err := s.path(key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	return writeAtomic(dir, path, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(ctxReader{ctx, r}, size+1))
		if err == nil && n != size {
			err = core.ErrBlobSize
		}
		return err
	})
}

// Open reads length bytes of key from offset (length < 0: to the end).
func (s *FS) Open(ctx context.Context, key string, offset, length int64) (_ io.ReadCloser, err error) {
	defer wrap(&err, "open", key)
	path, err := s.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, errors.New("negative offset")
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, core.ErrNoRows
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	if length < 0 {
		return f, nil
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(f, length), f}, nil
}

// ctxReader stops a long copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
