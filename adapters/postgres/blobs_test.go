package postgres_test

import (
	"context"
	"errors"
	"testing"

	"github.com/wshub/wshub/adapters/postgres"
	"github.com/wshub/wshub/adapters/postgres/pgtest"
	"github.com/wshub/wshub/internal/testkit/blobtest"
)

func TestBlobsKeepTheBlobStoreContract(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	blobtest.Contract(t, postgres.NewBlobs(store))
}

// The table records each value's size beside it, and leaves sealed bytes
// uncompressed: they are random, so compression would only cost CPU.
func TestBlobsRecordSizeAndSkipCompression(t *testing.T) {
	t.Parallel()
	store, _ := pgtest.NewStore(t)
	ctx := context.Background()
	blobs := postgres.NewBlobs(store)
	const key = "asset_0000000000000000/size"
	if err := blobs.Put(ctx, key, make([]byte, 100_000)); err != nil {
		t.Fatal(err)
	}
	var size int64
	if err := store.DB().GetContext(ctx, &size, `SELECT size FROM blobs WHERE key = $1`, key); err != nil || size != 100_000 {
		t.Errorf("expected size 100000 recorded, got %d (%v)", size, err)
	}
	// Zeros compress to almost nothing: stored at full length, nothing tried.
	var stored int64
	if err := store.DB().GetContext(ctx, &stored, `SELECT pg_column_size(data) FROM blobs WHERE key = $1`, key); err != nil || stored < 100_000 {
		t.Errorf("expected the value stored uncompressed (at least 100000 bytes), got %d (%v)", stored, err)
	}
	var storage string
	if err := store.DB().GetContext(ctx, &storage, `SELECT attstorage FROM pg_attribute
		WHERE attrelid = 'blobs'::regclass AND attname = 'data'`); err != nil || storage != "e" {
		t.Errorf("expected data's storage EXTERNAL (e), got %q (%v)", storage, err)
	}
	if err := blobs.Put(ctx, "a\x00b", []byte("x")); !errors.Is(err, postgres.ErrBadKey) {
		t.Errorf("Put of a key with a NUL: expected ErrBadKey, got %v", err)
	}
}
