package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wshub/wshub/core"
)

// Blobs is a core.BlobStore in the hub's own database (WSHUB_BLOBS=postgres), for
// replicas that share no disk and have no object store: every replica reads what any
// of them wrote. It keeps the file store's semantics: Put replaces, Get of a missing
// key is core.ErrNoRows, Delete of a missing key succeeds.
//
// The cost is the database's: every attachment is in its backups and its I/O, which
// suits attachments summing to tens of GB, not an archive.
type Blobs struct {
	s *Store
}

var _ core.BlobStore = (*Blobs)(nil)

// ErrBadKey is returned for a key the table cannot hold: empty, or with a NUL (text
// cannot store one). Core makes keys, so this is a bug caught, not a client's error.
var ErrBadKey = errors.New("invalid blob key")

// NewBlobs returns the blob store on s's pool (the blobs table, migration 00036).
func NewBlobs(s *Store) *Blobs { return &Blobs{s: s} }

func checkBlobKey(key string) error {
	if key == "" || strings.ContainsRune(key, 0) {
		return ErrBadKey
	}
	return nil
}

// Put upserts one row on the primary key. Statements are atomic, so a reader sees the
// old bytes or the new, never a mix, and concurrent Puts of one key leave one whole
// value (the last to commit), as the file store's rename does. created_at keeps the
// first write: a re-seal replaces the bytes of the same attachment.
func (b *Blobs) Put(ctx context.Context, key string, data []byte) (err error) {
	defer wrapErr(&err, "put blob %q", key)
	if err := checkBlobKey(key); err != nil {
		return err
	}
	if data == nil {
		data = []byte{} // a nil slice would be sent as NULL
	}
	_, err = b.s.db.ExecContext(ctx, `INSERT INTO blobs (key, data, size) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET data = excluded.data, size = excluded.size`, key, data, len(data))
	return mapErr(err)
}

// Get reads by primary key; a missing key is core.ErrNoRows.
func (b *Blobs) Get(ctx context.Context, key string) (_ []byte, err error) {
	defer wrapErr(&err, "get blob %q", key)
	if err := checkBlobKey(key); err != nil {
		return nil, err
	}
	var data []byte
	if err := b.s.db.GetContext(ctx, &data, `SELECT data FROM blobs WHERE key = $1`, key); err != nil {
		return nil, mapErr(err)
	}
	return data, nil
}

// Delete removes by primary key. A missing key succeeds: callers delete to clean up
// after a failure and should not have to know whether the Put got that far.
func (b *Blobs) Delete(ctx context.Context, key string) (err error) {
	defer wrapErr(&err, "delete blob %q", key)
	if err := checkBlobKey(key); err != nil {
		return err
	}
	_, err = b.s.db.ExecContext(ctx, `DELETE FROM blobs WHERE key = $1`, key)
	return mapErr(err)
}

// maxBlobBytes is the largest value a bytea column holds (1 GB).
const maxBlobBytes = 1 << 30

// PutFrom reads the size bytes into memory and Puts them: a bytea is sent whole. Values
// this store holds are bounded by memory and bytea's 1 GB; an object store suits more.
func (b *Blobs) PutFrom(ctx context.Context, key string, r io.Reader, size int64) (err error) {
	if size < 0 || size > maxBlobBytes {
		return fmt.Errorf("put blob %q: %d bytes is more than a bytea holds", key, size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return fmt.Errorf("put blob %q: %w (%w)", key, core.ErrBlobSize, err)
	}
	if n, _ := r.Read(make([]byte, 1)); n > 0 {
		return fmt.Errorf("put blob %q: %w", key, core.ErrBlobSize)
	}
	return b.Put(ctx, key, data)
}

// Open reads the range with substring, so only its bytes leave the database.
func (b *Blobs) Open(ctx context.Context, key string, offset, length int64) (_ io.ReadCloser, err error) {
	defer wrapErr(&err, "open blob %q", key)
	if err := checkBlobKey(key); err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, errors.New("negative offset")
	}
	var data []byte
	if length < 0 {
		err = b.s.db.GetContext(ctx, &data, `SELECT substring(data FROM $2) FROM blobs WHERE key = $1`, key, offset+1)
	} else {
		err = b.s.db.GetContext(ctx, &data, `SELECT substring(data FROM $2 FOR $3) FROM blobs WHERE key = $1`, key, offset+1, length)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}
