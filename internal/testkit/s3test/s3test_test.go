package s3test

import (
	"bytes"
	"context"
	"io"
	"slices"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The server takes and serves objects, lists them, and stops with the test; the
// proxy passes small requests and cuts a connection that sends too much.
func TestServerStoresObjectsAndTheProxyCutsLargeUploads(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	if _, err := s.Client.PutObject(ctx, s.Bucket, "a/b", bytes.NewReader([]byte("hello")), 5, minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put: expected no error, got %v", err)
	}
	obj, err := s.Client.GetObject(ctx, s.Bucket, "a/b", minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("get: expected no error, got %v", err)
	}
	got, err := io.ReadAll(obj)
	if err != nil || string(got) != "hello" {
		t.Fatalf("get: expected %q, got %q (%v)", "hello", got, err)
	}
	if keys := s.Keys(t, s.Bucket, ""); !slices.Equal(keys, []string{"a/b"}) {
		t.Fatalf("keys: expected [a/b], got %v", keys)
	}

	p := s.CuttingProxy(t, 64<<10)
	via, err := minio.New(p.Endpoint[len("http://"):], &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKeyID, s.SecretAccessKey, ""), Region: Region, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := via.StatObject(ctx, s.Bucket, "a/b", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("stat through the proxy: expected no error, got %v", err)
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	_, err = via.PutObject(ctx, s.Bucket, "big", bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{DisableMultipart: true})
	if err == nil {
		t.Fatalf("put of 1 MiB through a proxy that cuts at 64 KiB: expected an error, got none")
	}
	if p.Cuts() == 0 {
		t.Errorf("cuts: expected the proxy to have cut the upload, got none (%v)", err)
	}
	if keys := s.Keys(t, s.Bucket, ""); !slices.Equal(keys, []string{"a/b"}) {
		t.Fatalf("keys after a cut upload: expected [a/b], got %v", keys)
	}
}
