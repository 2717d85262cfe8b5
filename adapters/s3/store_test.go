package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/wshub/wshub/core"
	"github.com/wshub/wshub/internal/testkit/blobtest"
	"github.com/wshub/wshub/internal/testkit/s3test"
)

// options are a store's options on srv's bucket, as its root account.
func options(srv *s3test.Server) Options {
	o := Options{Endpoint: srv.Endpoint, Bucket: srv.Bucket, Region: s3test.Region,
		AccessKeyID: srv.AccessKeyID, SecretAccessKey: srv.SecretAccessKey}
	if srv.Transport != nil {
		o.Transport = srv.Transport
	}
	return o
}

// schemes start a server over http (loopback only) and over https (every other
// endpoint), where minio-go signs uploads differently: chunk by chunk over http, the
// headers only over https.
var schemes = []struct {
	name  string
	start func(testing.TB) *s3test.Server
}{{"http", s3test.Start}, {"https", s3test.StartTLS}}

// newStore builds a store with o and checks it, failing the test on an error.
func newStore(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: expected no error, got %v", err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("Check: expected no error, got %v", err)
	}
	return s
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestS3KeepsTheBlobStoreContract(t *testing.T) {
	t.Parallel()
	for _, scheme := range schemes {
		t.Run(scheme.name, func(t *testing.T) {
			t.Parallel()
			srv := scheme.start(t)
			blobtest.Contract(t, newStore(t, options(srv)))
		})
	}
}

// A streamed value larger than PartSize goes up in parts and reads back whole, across
// the parts' boundaries, leaving no upload open.
func TestALargeValueGoesUpInParts(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	o := options(srv)
	o.PartSize = 5 << 20 // S3's smallest part
	s := newStore(t, o)
	ctx := context.Background()
	value := randomBytes(t, 12<<20)
	const key = "branch_0123456789ABCDEF/bundle"
	if err := s.PutFrom(ctx, key, bytes.NewReader(value), int64(len(value))); err != nil {
		t.Fatalf("PutFrom of 12 MiB in 5 MiB parts: expected no error, got %v", err)
	}
	rc, err := s.Open(ctx, key, 5<<20-10, 20)
	if err != nil {
		t.Fatalf("Open across a part boundary: expected no error, got %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if want := value[5<<20-10 : 5<<20+10]; err != nil || !bytes.Equal(got, want) {
		t.Errorf("Open across a part boundary: expected the 20 bytes there, got %d (%v)", len(got), err)
	}
	if got, err := s.Get(ctx, key); err != nil || !bytes.Equal(got, value) {
		t.Errorf("Get: expected the %d bytes put, got %d (%v)", len(value), len(got), err)
	}
	// A reader that is short in its last part stores nothing, and its upload is
	// aborted rather than left holding two parts.
	short := "branch_0123456789ABCDEF/short"
	if err := s.PutFrom(ctx, short, bytes.NewReader(value), int64(len(value))+1); !errors.Is(err, core.ErrBlobSize) {
		t.Errorf("PutFrom in parts, one byte short: expected core.ErrBlobSize, got %v", err)
	}
	if _, err := s.Get(ctx, short); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("Get after a short PutFrom in parts: expected core.ErrNoRows, got %v", err)
	}
	if uploads := srv.Uploads(t, srv.Bucket); len(uploads) != 0 {
		t.Errorf("multipart uploads left open: expected none, got %v", uploads)
	}
}

// The connection to the server is cut in the middle of an upload: the store says so,
// nothing of the upload becomes visible, a value it was replacing is intact, and no
// multipart upload is left behind.
func TestAnUploadCutShortStoresNothing(t *testing.T) {
	t.Parallel()
	for _, scheme := range schemes {
		t.Run(scheme.name, func(t *testing.T) {
			t.Parallel()
			uploadCutShort(t, scheme.start(t))
		})
	}
}

func uploadCutShort(t *testing.T, srv *s3test.Server) {
	ctx := context.Background()
	direct := newStore(t, options(srv))
	// Every connection that sends more than 256 KiB is cut: the values below are 1 MiB
	// (one PUT) and 12 MiB (parts of 5 MiB; the first part already goes past it).
	proxy := srv.CuttingProxy(t, 256<<10)
	via := options(srv)
	via.Endpoint = proxy.Endpoint
	via.MaxRetries = 2 // each retry of Put is cut too; keep the test short
	single := newStore(t, via)
	via.PartSize = 5 << 20
	parts := newStore(t, via)
	old := []byte("the old value")

	tests := []struct {
		name  string
		store *Store
		size  int
		put   func(s *Store, key string, value []byte) error
	}{
		{"Put", single, 1 << 20, func(s *Store, key string, v []byte) error { return s.Put(ctx, key, v) }},
		{"PutFrom", single, 1 << 20, func(s *Store, key string, v []byte) error {
			return s.PutFrom(ctx, key, bytes.NewReader(v), int64(len(v)))
		}},
		{"PutFrom in parts", parts, 12 << 20, func(s *Store, key string, v []byte) error {
			return s.PutFrom(ctx, key, bytes.NewReader(v), int64(len(v)))
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value := randomBytes(t, tt.size)
			fresh := fmt.Sprintf("asset_%016d/new", i)
			replaced := fmt.Sprintf("asset_%016d/old", i)
			if err := direct.Put(ctx, replaced, old); err != nil {
				t.Fatalf("Put of the old value: expected no error, got %v", err)
			}
			cuts := proxy.Cuts()
			for _, key := range []string{fresh, replaced} {
				if err := tt.put(tt.store, key, value); err == nil || errors.Is(err, core.ErrBlobSize) {
					t.Errorf("%s of %s cut short: expected a network error, got %v", tt.name, key, err)
				}
			}
			if proxy.Cuts() == cuts {
				t.Fatalf("proxy: expected it to cut the uploads, it cut none")
			}
			if _, err := direct.Get(ctx, fresh); !errors.Is(err, core.ErrNoRows) {
				t.Errorf("Get of a new key whose upload was cut: expected core.ErrNoRows, got %v", err)
			}
			if got, err := direct.Get(ctx, replaced); err != nil || !bytes.Equal(got, old) {
				t.Errorf("Get of a key whose replacement was cut: expected %q, got %d bytes (%v)", old, len(got), err)
			}
			if keys := srv.Keys(t, srv.Bucket, fmt.Sprintf("asset_%016d/", i)); !slices.Equal(keys, []string{replaced}) {
				t.Errorf("keys after the cut uploads: expected [%s], got %v", replaced, keys)
			}
			if uploads := srv.Uploads(t, srv.Bucket); len(uploads) != 0 {
				t.Errorf("multipart uploads left open: expected none, got %v", uploads)
			}
		})
	}
}

// Credentials the server does not know, or a secret that does not match, are a clear
// error from the start-up check and from every call, never a missing key.
func TestWrongCredentialsAreRefusedClearly(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	ctx := context.Background()
	if err := newStore(t, options(srv)).Put(ctx, "asset_0000000000000000/x", []byte("x")); err != nil {
		t.Fatalf("Put with the right credentials: expected no error, got %v", err)
	}
	tests := []struct {
		name string
		edit func(*Options)
		code string
	}{
		{"unknown access key", func(o *Options) { o.AccessKeyID = "AKNOBODY" }, "InvalidAccessKeyId"},
		{"wrong secret", func(o *Options) { o.SecretAccessKey += "x" }, "SignatureDoesNotMatch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(srv)
			tt.edit(&o)
			s, err := New(o)
			if err != nil {
				t.Fatalf("New: expected no error (nothing is sent yet), got %v", err)
			}
			err = s.Check(ctx)
			if !errors.Is(err, ErrCredentials) || !strings.Contains(err.Error(), tt.code) || !strings.Contains(err.Error(), srv.Bucket) {
				t.Errorf("Check: expected ErrCredentials naming %s and the bucket, got %v", tt.code, err)
			}
			calls := map[string]error{
				"Put":    s.Put(ctx, "asset_0000000000000000/x", []byte("y")),
				"Delete": s.Delete(ctx, "asset_0000000000000000/x"),
			}
			_, calls["Get"] = s.Get(ctx, "asset_0000000000000000/x")
			_, calls["Get missing"] = s.Get(ctx, "asset_0000000000000000/missing")
			_, calls["Open"] = s.Open(ctx, "asset_0000000000000000/x", 0, -1)
			for call, err := range calls {
				if !errors.Is(err, ErrCredentials) || errors.Is(err, core.ErrNoRows) {
					t.Errorf("%s: expected ErrCredentials (and not core.ErrNoRows), got %v", call, err)
				}
			}
		})
	}
}

// A bucket that does not exist fails the start-up check, naming it; the store never
// makes it.
func TestAMissingBucketIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	o := options(srv)
	o.Bucket = "wshub-missing"
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: expected no error (nothing is sent yet), got %v", err)
	}
	err = s.Check(context.Background())
	if !errors.Is(err, ErrNoBucket) || !strings.Contains(err.Error(), `bucket "wshub-missing" at `+srv.Endpoint) {
		t.Errorf("Check: expected ErrNoBucket naming the bucket and endpoint, got %v", err)
	}
	if _, err := s.Get(context.Background(), "asset_0000000000000000/x"); !errors.Is(err, ErrNoBucket) || errors.Is(err, core.ErrNoRows) {
		t.Errorf("Get: expected ErrNoBucket (not core.ErrNoRows), got %v", err)
	}
	if ok, err := srv.Client.BucketExists(context.Background(), "wshub-missing"); err != nil || ok {
		t.Errorf("bucket wshub-missing: expected the store not to have made it, got exists=%v (%v)", ok, err)
	}
}

// Stores with different prefixes share a bucket without seeing each other's values,
// and every object is under its store's prefix.
func TestPrefixesShareABucket(t *testing.T) {
	t.Parallel()
	srv := s3test.Start(t)
	ctx := context.Background()
	const key = "asset_0123456789ABCDEF/0123456789abcdef"
	for _, prefix := range []string{"hub-a/", "hub-b/"} {
		o := options(srv)
		o.Prefix = prefix
		if err := newStore(t, o).Put(ctx, key, []byte(prefix)); err != nil {
			t.Fatalf("Put with prefix %q: expected no error, got %v", prefix, err)
		}
	}
	for _, prefix := range []string{"hub-a/", "hub-b/"} {
		o := options(srv)
		o.Prefix = prefix
		if got, err := newStore(t, o).Get(ctx, key); err != nil || string(got) != prefix {
			t.Errorf("Get with prefix %q: expected %q, got %q (%v)", prefix, prefix, got, err)
		}
	}
	if got, want := srv.Keys(t, srv.Bucket, ""), []string{"hub-a/" + key, "hub-b/" + key}; !slices.Equal(got, want) {
		t.Errorf("keys: expected %v, got %v", want, got)
	}
	if _, err := newStore(t, options(srv)).Get(ctx, key); !errors.Is(err, core.ErrNoRows) {
		t.Errorf("Get without a prefix: expected core.ErrNoRows, got %v", err)
	}
}

// Keys that could name another object, or none, are refused before any request.
func TestBadKeysAreRefused(t *testing.T) {
	t.Parallel()
	// No server: a refused key sends nothing (the endpoint does not answer).
	s, err := New(Options{Endpoint: "http://127.0.0.1:1", Bucket: "b", AccessKeyID: "a", SecretAccessKey: "s", Prefix: "p/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, key := range []string{"", "/x", "x/", "a//b", ".", "..", "a/../b", "a/./b", "x\x00y", "x\ny", "\xff", strings.Repeat("k", 1023)} {
		name := fmt.Sprintf("%q", key)
		if len(key) > 100 {
			name = fmt.Sprintf("%d bytes with the prefix", len(key)+len("p/"))
		}
		t.Run(name, func(t *testing.T) {
			if err := s.Put(ctx, key, []byte("x")); !errors.Is(err, ErrBadKey) {
				t.Errorf("Put: expected ErrBadKey, got %v", err)
			}
			if err := s.PutFrom(ctx, key, strings.NewReader("x"), 1); !errors.Is(err, ErrBadKey) {
				t.Errorf("PutFrom: expected ErrBadKey, got %v", err)
			}
			if _, err := s.Get(ctx, key); !errors.Is(err, ErrBadKey) {
				t.Errorf("Get: expected ErrBadKey, got %v", err)
			}
			if _, err := s.Open(ctx, key, 0, -1); !errors.Is(err, ErrBadKey) {
				t.Errorf("Open: expected ErrBadKey, got %v", err)
			}
			if err := s.Delete(ctx, key); !errors.Is(err, ErrBadKey) {
				t.Errorf("Delete: expected ErrBadKey, got %v", err)
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	good := Options{Endpoint: "https://s3.example.com", Bucket: "b", AccessKeyID: "a", SecretAccessKey: "s"}
	tests := []struct {
		name string
		edit func(*Options)
		want string // "" : accepted
	}{
		{"https", func(o *Options) {}, ""},
		{"https with a port and a slash", func(o *Options) { o.Endpoint = "https://minio.example.com:9000/" }, ""},
		{"http to loopback", func(o *Options) { o.Endpoint = "http://127.0.0.1:9000" }, ""},
		{"http to localhost", func(o *Options) { o.Endpoint = "http://localhost:9000" }, ""},
		{"http to ::1", func(o *Options) { o.Endpoint = "http://[::1]:9000" }, ""},
		{"a prefix", func(o *Options) { o.Prefix = "wshub/" }, ""},
		{"no endpoint", func(o *Options) { o.Endpoint = "" }, "no endpoint"},
		{"http to another host", func(o *Options) { o.Endpoint = "http://minio.internal:9000" }, "http is allowed to a loopback host only"},
		{"no scheme", func(o *Options) { o.Endpoint = "s3.example.com" }, "not a URL such as"},
		{"another scheme", func(o *Options) { o.Endpoint = "ftp://s3.example.com" }, "the scheme must be https"},
		{"a path", func(o *Options) { o.Endpoint = "https://s3.example.com/bucket" }, "no path, query or fragment"},
		{"credentials in the URL", func(o *Options) { o.Endpoint = "https://a:secret@s3.example.com" }, "credentials do not belong in the URL"},
		{"no bucket", func(o *Options) { o.Bucket = "" }, "no bucket"},
		{"no access key", func(o *Options) { o.AccessKeyID = "" }, "no access key id or secret access key"},
		{"no secret", func(o *Options) { o.SecretAccessKey = "" }, "no access key id or secret access key"},
		{"a prefix from the root", func(o *Options) { o.Prefix = "/wshub" }, "not starting with /"},
		{"parts of 1 MiB", func(o *Options) { o.PartSize = 1 << 20 }, "part size 1048576: must be"},
		{"parts of 6 GiB", func(o *Options) { o.PartSize = 6 << 30 }, "must be 5242880 to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := good
			tt.edit(&o)
			_, err := New(o)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("New: expected no error, got %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("New: expected an error saying %q, got %v", tt.want, err)
			case err != nil && strings.Contains(err.Error(), "secret"+"@"):
				t.Errorf("New: expected the error not to repeat the URL's password, got %v", err)
			}
		})
	}
}
