package assets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/blobtest"
)

func newStore(t *testing.T) *FS {
	t.Helper()
	s, err := NewFS(filepath.Join(t.TempDir(), "blobs", "nested"))
	if err != nil {
		t.Fatalf("NewFS: expected no error, got %v", err)
	}
	return s
}

func TestNewFSCreatesPrivateDir(t *testing.T) {
	s := newStore(t)
	fi, err := os.Stat(s.dir)
	if err != nil {
		t.Fatalf("stat store dir: expected no error, got %v", err)
	}
	if got := fi.Mode().Perm(); got != dirMode {
		t.Errorf("store dir mode: expected %o, got %o", dirMode, got)
	}
	if _, err := NewFS(""); err == nil {
		t.Errorf("NewFS(\"\"): expected an error, got none")
	}
}

func TestPutGetDelete(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	tests := []struct {
		name string
		key  string
		data []byte
	}{
		{"asset key", "asset_0123456789ABCDEF/0123456789abcdef", []byte("sealed bytes")},
		{"flat key", "asset_FEDCBA9876543210", []byte{0, 1, 2, 255}},
		{"empty value", "asset_0000000000000000/empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Put(ctx, tt.key, tt.data); err != nil {
				t.Fatalf("Put: expected no error, got %v", err)
			}
			got, err := s.Get(ctx, tt.key)
			if err != nil {
				t.Fatalf("Get: expected no error, got %v", err)
			}
			if !bytes.Equal(got, tt.data) {
				t.Errorf("Get: expected %q, got %q", tt.data, got)
			}
			fi, err := os.Stat(filepath.Join(s.dir, filepath.FromSlash(tt.key)))
			if err != nil {
				t.Fatalf("stat blob: expected no error, got %v", err)
			}
			if got := fi.Mode().Perm(); got != fileMode {
				t.Errorf("blob mode: expected %o, got %o", fileMode, got)
			}
			if err := s.Put(ctx, tt.key, []byte("replaced")); err != nil {
				t.Fatalf("second Put: expected no error, got %v", err)
			}
			if got, _ := s.Get(ctx, tt.key); string(got) != "replaced" {
				t.Errorf("Get after overwrite: expected %q, got %q", "replaced", got)
			}
			if err := s.Delete(ctx, tt.key); err != nil {
				t.Fatalf("Delete: expected no error, got %v", err)
			}
			if _, err := s.Get(ctx, tt.key); !errors.Is(err, core.ErrNoRows) {
				t.Errorf("Get after Delete: expected core.ErrNoRows, got %v", err)
			}
			if err := s.Delete(ctx, tt.key); err != nil {
				t.Errorf("second Delete: expected no error, got %v", err)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	if _, err := s.Get(ctx, "asset_0000000000000000/missing"); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("Get missing: expected core.ErrNoRows, got %v", err)
	}
	if err := s.Delete(ctx, "asset_0000000000000000/missing"); err != nil {
		t.Errorf("Delete missing: expected no error, got %v", err)
	}
}

func TestBadKeys(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	keys := []string{
		"",
		"/",
		"/etc/passwd",
		"..",
		"../escape",
		"asset_1/..",
		"asset_1/../../x",
		"a..b",
		".hidden",
		"asset_1/.tmp-123",
		"asset_1\\x",
		"..\\x",
		"asset_1//x",
		"asset_1/",
		"/asset_1",
		"a/b/c",
		"asset_1/x\x00y",
	}
	for _, key := range keys {
		t.Run(fmt.Sprintf("%q", key), func(t *testing.T) {
			if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, ErrBadKey) {
				t.Errorf("Put(%q): expected ErrBadKey, got %v", key, err)
			}
			if _, err := s.Get(ctx, key); !errors.Is(err, ErrBadKey) {
				t.Errorf("Get(%q): expected ErrBadKey, got %v", key, err)
			}
			if err := s.Delete(ctx, key); !errors.Is(err, ErrBadKey) {
				t.Errorf("Delete(%q): expected ErrBadKey, got %v", key, err)
			}
		})
	}
	// Nothing may have been written anywhere near the store.
	parent := filepath.Dir(s.dir)
	err := filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("files after bad keys: expected none, got %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
}

func TestConcurrentPutSameKey(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	const key = "asset_0123456789ABCDEF/0123456789abcdef"
	const writers = 16
	values := make([][]byte, writers)
	for i := range values {
		values[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
	}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for range 5 {
				if err := s.Put(ctx, key, values[i]); err != nil {
					t.Errorf("writer %d Put: expected no error, got %v", i, err)
				}
				got, err := s.Get(ctx, key)
				if err != nil {
					t.Errorf("writer %d Get: expected no error, got %v", i, err)
					continue
				}
				if !isOneOf(got, values) {
					t.Errorf("writer %d Get: expected one complete value, got %d mixed bytes", i, len(got))
				}
			}
		})
	}
	wg.Wait()
	entries, err := os.ReadDir(filepath.Dir(filepath.Join(s.dir, key)))
	if err != nil {
		t.Fatalf("read key dir: %v", err)
	}
	if len(entries) != 1 || entries[0].Name() != "0123456789abcdef" {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		t.Errorf("key dir entries: expected [0123456789abcdef], got %v", names)
	}
}

func isOneOf(got []byte, values [][]byte) bool {
	for _, v := range values {
		if bytes.Equal(got, v) {
			return true
		}
	}
	return false
}

func TestCanceledContext(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	const key = "asset_0000000000000000/x"
	if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Put: expected context.Canceled, got %v", err)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, context.Canceled) {
		t.Errorf("Get: expected context.Canceled, got %v", err)
	}
	if err := s.Delete(ctx, key); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete: expected context.Canceled, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "asset_0000000000000000")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat after canceled Put: expected fs.ErrNotExist, got %v", err)
	}
}

func TestFSKeepsTheBlobStoreContract(t *testing.T) {
	blobtest.Contract(t, newStore(t))
}
