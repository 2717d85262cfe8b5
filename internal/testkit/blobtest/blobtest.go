// Package blobtest is the contract every core.BlobStore keeps, run against each
// store's adapter from its own tests, so switching WSHUB_BLOBS never changes what core
// sees.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/wshub/wshub/core"
)

// MaxValue is the largest value a store must keep: an attachment at the upload limit
// plus room for the sealing's nonce and tag.
const MaxValue = core.MaxAssetBytes + 1024

// Contract runs the cases every blob store must pass against an empty store.
func Contract(t *testing.T, store core.BlobStore) {
	t.Helper()
	ctx := context.Background()
	random := make([]byte, 4096)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	large := make([]byte, MaxValue)
	if _, err := rand.Read(large); err != nil {
		t.Fatal(err)
	}

	t.Run("PutGetOverwriteDelete", func(t *testing.T) {
		tests := []struct {
			name string
			key  string
			data []byte
		}{
			{"asset key", "asset_0123456789ABCDEF/0123456789abcdef", []byte("sealed bytes")},
			{"flat key", "asset_FEDCBA9876543210", []byte{0, 1, 2, 255}},
			{"empty value", "asset_0000000000000000/empty", nil},
			// Every byte value, NULs and invalid UTF-8 included: sealed bytes are random.
			{"binary bytes", "asset_0000000000000001/binary", random},
			{"largest attachment", "asset_0000000000000002/large", large},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := store.Put(ctx, tt.key, tt.data); err != nil {
					t.Fatalf("Put: expected no error, got %v", err)
				}
				got, err := store.Get(ctx, tt.key)
				if err != nil {
					t.Fatalf("Get: expected no error, got %v", err)
				}
				if !bytes.Equal(got, tt.data) {
					t.Errorf("Get: expected the %d bytes put, got %d different ones", len(tt.data), len(got))
				}
				if err := store.Put(ctx, tt.key, []byte("replaced")); err != nil {
					t.Fatalf("second Put: expected no error, got %v", err)
				}
				if got, err := store.Get(ctx, tt.key); err != nil || string(got) != "replaced" {
					t.Errorf("Get after overwrite: expected %q, got %q (%v)", "replaced", got, err)
				}
				if err := store.Delete(ctx, tt.key); err != nil {
					t.Fatalf("Delete: expected no error, got %v", err)
				}
				if _, err := store.Get(ctx, tt.key); !errors.Is(err, core.ErrNoRows) {
					t.Errorf("Get after Delete: expected core.ErrNoRows, got %v", err)
				}
				if err := store.Delete(ctx, tt.key); err != nil {
					t.Errorf("second Delete: expected no error, got %v", err)
				}
			})
		}
	})

	t.Run("MissingKey", func(t *testing.T) {
		const key = "asset_0000000000000000/missing"
		if _, err := store.Get(ctx, key); !errors.Is(err, core.ErrNoRows) {
			t.Errorf("Get missing: expected core.ErrNoRows, got %v", err)
		}
		if err := store.Delete(ctx, key); err != nil {
			t.Errorf("Delete missing: expected no error, got %v", err)
		}
	})

	t.Run("KeysAreDistinct", func(t *testing.T) {
		// Siblings under one asset and a flat key sharing their prefix: no value leaks
		// into another. (A key and its own prefix cannot both exist in the file store,
		// where the prefix is a directory; core never makes such a pair.)
		keys := []string{"asset_00000000000000031", "asset_0000000000000003/a", "asset_0000000000000003/b"}
		for _, k := range keys {
			if err := store.Put(ctx, k, []byte(k)); err != nil {
				t.Fatalf("Put %q: expected no error, got %v", k, err)
			}
		}
		if err := store.Delete(ctx, keys[1]); err != nil {
			t.Fatalf("Delete %q: expected no error, got %v", keys[1], err)
		}
		for _, k := range []string{keys[0], keys[2]} {
			if got, err := store.Get(ctx, k); err != nil || string(got) != k {
				t.Errorf("Get %q after deleting a sibling: expected %q, got %q (%v)", k, k, got, err)
			}
		}
	})

	t.Run("EmptyKeyRefused", func(t *testing.T) {
		if err := store.Put(ctx, "", []byte("x")); err == nil {
			t.Errorf("Put(\"\"): expected an error, got none")
		}
		if _, err := store.Get(ctx, ""); err == nil || errors.Is(err, core.ErrNoRows) {
			t.Errorf("Get(\"\"): expected an invalid-key error, got %v", err)
		}
		if err := store.Delete(ctx, ""); err == nil {
			t.Errorf("Delete(\"\"): expected an error, got none")
		}
	})

	t.Run("ConcurrentPutSameKey", func(t *testing.T) {
		const key = "asset_0123456789ABCDEF/concurrent"
		const writers = 8
		values := make([][]byte, writers)
		for i := range values {
			values[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
		}
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				for range 5 {
					if err := store.Put(ctx, key, values[i]); err != nil {
						t.Errorf("writer %d Put: expected no error, got %v", i, err)
					}
					got, err := store.Get(ctx, key)
					if err != nil {
						t.Errorf("writer %d Get: expected no error, got %v", i, err)
						continue
					}
					if !oneOf(got, values) {
						t.Errorf("writer %d Get: expected one whole value, got %d mixed bytes", i, len(got))
					}
				}
			})
		}
		wg.Wait()
	})

	t.Run("CanceledContext", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		const key = "asset_0000000000000004/canceled"
		if err := store.Put(cctx, key, []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Put: expected context.Canceled, got %v", err)
		}
		if _, err := store.Get(cctx, key); !errors.Is(err, context.Canceled) {
			t.Errorf("Get: expected context.Canceled, got %v", err)
		}
		if err := store.Delete(cctx, key); !errors.Is(err, context.Canceled) {
			t.Errorf("Delete: expected context.Canceled, got %v", err)
		}
		if _, err := store.Get(ctx, key); !errors.Is(err, core.ErrNoRows) {
			t.Errorf("Get after a canceled Put: expected core.ErrNoRows, got %v", err)
		}
	})

	t.Run("Streams", func(t *testing.T) { streams(t, store, random) })
}

// streams: PutFrom of a reader of known size, Open of a range, and a reader that does
// not hold the size it was given storing nothing.
func streams(t *testing.T, store core.BlobStore, value []byte) {
	ctx := context.Background()
	const key = "branch_0123456789ABCDEF/bundle"
	if err := store.PutFrom(ctx, key, bytes.NewReader(value), int64(len(value))); err != nil {
		t.Fatalf("PutFrom: expected no error, got %v", err)
	}
	defer store.Delete(ctx, key)
	tests := []struct {
		name           string
		offset, length int64
		want           []byte
	}{
		{"whole", 0, -1, value},
		{"from an offset", 100, -1, value[100:]},
		{"a range", 100, 50, value[100:150]},
		{"a range past the end", int64(len(value) - 10), 50, value[len(value)-10:]},
		{"empty range", 7, 0, []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc, err := store.Open(ctx, key, tt.offset, tt.length)
			if err != nil {
				t.Fatalf("Open: expected no error, got %v", err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Errorf("Open(%d, %d): expected %d bytes of the value, got %d (%v)", tt.offset, tt.length, len(tt.want), len(got), err)
			}
		})
	}
	if _, err := store.Open(ctx, "branch_0123456789ABCDEF/missing", 0, -1); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("Open missing: expected core.ErrNoRows, got %v", err)
	}
	for _, size := range []int64{int64(len(value)) + 1, int64(len(value)) - 1} {
		const short = "branch_0123456789ABCDEF/wrong-size"
		if err := store.PutFrom(ctx, short, bytes.NewReader(value), size); !errors.Is(err, core.ErrBlobSize) {
			t.Errorf("PutFrom of %d bytes said to be %d: expected core.ErrBlobSize, got %v", len(value), size, err)
		}
		if _, err := store.Get(ctx, short); !errors.Is(err, core.ErrNoRows) {
			t.Errorf("Get after a PutFrom of the wrong size: expected nothing stored, got %v", err)
		}
	}
	// The previous value stays whole when a replacement fails.
	if err := store.PutFrom(ctx, key, bytes.NewReader(value[:10]), 11); !errors.Is(err, core.ErrBlobSize) {
		t.Errorf("PutFrom over a value, short: expected core.ErrBlobSize, got %v", err)
	}
	if got, err := store.Get(ctx, key); err != nil || !bytes.Equal(got, value) {
		t.Errorf("Get after a failed replacement: expected the old %d bytes, got %d (%v)", len(value), len(got), err)
	}
}

func oneOf(got []byte, values [][]byte) bool {
	for _, v := range values {
		if bytes.Equal(got, v) {
			return true
		}
	}
	return false
}
