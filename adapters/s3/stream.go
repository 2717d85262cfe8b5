package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/wshub/wshub/core"
)

// PutFrom stores the size bytes r holds under key, holding at most one part of them in
// memory: a value up to PartSize is read whole and Put (one PUT, retried), a larger
// one goes up as a multipart upload of PartSize parts, each with its MD5 (a part is
// retried; the upload is completed only once every part is in, and aborted
// otherwise). r is read through a reader that fails in place of an early end, and in
// place of the last bytes when r holds more: then the upload is never completed, so
// the key keeps its old value (or none).
func (s *Store) PutFrom(ctx context.Context, key string, r io.Reader, size int64) (err error) {
	defer wrap(&err, "put", key)
	name, err := s.name(ctx, key)
	if err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("negative size %d", size)
	}
	exact := &exactReader{r: r, left: size}
	if size <= s.partSize {
		data := make([]byte, size)
		if size == 0 {
			// No byte is read for an empty value: look for a surplus all the same.
			err = exact.checkEnd()
		} else {
			_, err = io.ReadFull(exact, data)
		}
		if err != nil {
			return err
		}
		return s.put(ctx, name, bytes.NewReader(data), size, false)
	}
	err = s.put(ctx, name, exact, size, true)
	if exact.err != nil {
		return exact.err
	}
	if err == nil && exact.left != 0 {
		// Defensive: minio-go completes an upload only when it has read size bytes,
		// but should it ever do less, the value must not stand.
		_ = s.Delete(context.WithoutCancel(ctx), key)
		return core.ErrBlobSize
	}
	return err
}

// exactReader passes size bytes of r, failing with core.ErrBlobSize in place of an
// early end, and in place of the last bytes when r holds more: the upload carrying
// them then never completes.
type exactReader struct {
	r    io.Reader
	left int64
	err  error // the first failure of r, or core.ErrBlobSize
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	switch {
	case e.left == 0:
		if err := e.checkEnd(); err != nil {
			return 0, err // the last bytes are held back, and the request fails
		}
		return n, nil
	case errors.Is(err, io.EOF):
		e.err = fmt.Errorf("%w: %d bytes short", core.ErrBlobSize, e.left)
		return 0, e.err
	case err != nil:
		e.err = err
		return n, err
	}
	return n, nil
}

// checkEnd fails unless r is at its end.
func (e *exactReader) checkEnd() error {
	var one [1]byte
	n, err := io.ReadFull(e.r, one[:])
	switch {
	case n > 0:
		e.err = fmt.Errorf("%w: the reader holds more", core.ErrBlobSize)
	case !errors.Is(err, io.EOF):
		e.err = err
	}
	return e.err
}

// Open reads length bytes of key from offset (length < 0: to the end) with a range
// GET, so only those bytes cross the network. The request is made here, not at the
// first Read, so a missing key is Open's core.ErrNoRows.
func (s *Store) Open(ctx context.Context, key string, offset, length int64) (_ io.ReadCloser, err error) {
	defer wrap(&err, "open", key)
	name, err := s.name(ctx, key)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, errors.New("negative offset")
	}
	if length == 0 {
		// No range asks for nothing: say whether the key exists, and read nothing.
		return s.empty(ctx, name)
	}
	var opts minio.GetObjectOptions
	switch {
	case length > 0:
		err = opts.SetRange(offset, offset+length-1)
	case offset > 0:
		err = opts.SetRange(offset, 0)
	}
	if err != nil {
		return nil, err
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, name, opts)
	if minio.ToErrorResponse(err).Code == minio.InvalidRange {
		// The range starts at or past the end (or the value is empty): cut short to
		// nothing, as a file read past its end is.
		return s.empty(ctx, name)
	}
	if err != nil {
		return nil, s.mapErr(err)
	}
	return body, nil
}

// empty is an empty reader for an existing key, and core.ErrNoRows for a missing one.
func (s *Store) empty(ctx context.Context, name string) (io.ReadCloser, error) {
	if _, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{}); err != nil {
		return nil, s.mapErr(err)
	}
	return io.NopCloser(strings.NewReader("")), nil
}
