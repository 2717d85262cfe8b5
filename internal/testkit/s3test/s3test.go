// Package s3test runs a real S3 server for tests: the Versity S3 Gateway (versitygw)
// with its posix backend, on a loopback port, over a temporary directory, with
// credentials made for the test. Each bucket is a directory of that root and each
// object a file under it.
//
// The binary comes from `bash scripts/s3.sh`, which builds it from the Go module proxy
// into a per-user cache. Tests skip, saying so, when it is missing.
package s3test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/wshub/wshub/internal/testkit/enginetest"
)

// Version is the versitygw release scripts/s3.sh builds by default; its cache
// directory is searched first.
const Version = "v1.8.0"

// EnvBinary names a versitygw binary; it overrides the cache and PATH.
const EnvBinary = "WSHUB_VERSITYGW"

// Region is the region the server says it is in.
const Region = "us-east-1"

// startTimeout bounds the wait for the server to answer (it is ready in well under a
// second; the margin is for a loaded machine running tests under -race).
const startTimeout = 60 * time.Second

// Server is a running versitygw, stopped by t.Cleanup.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:<port> (https:// from StartTLS).
	Endpoint string
	// CA is the PEM certificate a StartTLS server presents (self-signed, for
	// 127.0.0.1), and Transport an HTTP transport that trusts it; both nil over http.
	CA        []byte
	Transport *http.Transport
	// AccessKeyID and SecretAccessKey are the root account's, made for this server.
	AccessKeyID, SecretAccessKey string
	// Bucket is an empty bucket made at start.
	Bucket string
	// Root is the posix backend's directory: a directory per bucket.
	Root string
	// Client is a client as the root account (to make buckets, list what a store
	// left, and so on).
	Client *minio.Client
}

// Start starts versitygw on a free loopback port, over http, waits until it answers
// signed requests, and makes Bucket. It skips the test when versitygw is not
// installed, and fails it when it is configured but does not work.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

// StartTLS is Start over https, with a certificate made for the test: the scheme every
// endpoint but a loopback one must have, where clients sign requests differently.
func StartTLS(t testing.TB) *Server {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, secure bool) *Server {
	t.Helper()
	bin := built.Binary(t)
	started := time.Now()
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	s := &Server{AccessKeyID: "AK" + enginetest.RandomHex(t, 9), SecretAccessKey: enginetest.RandomHex(t, 20), Root: root}
	scheme := "http://"
	var tlsFlags []string
	if secure {
		scheme = "https://"
		tlsFlags = s.makeCert(t, dir)
	}
	logPath := filepath.Join(dir, "versitygw.log")
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		// The port is picked anew for each attempt: another process may take it
		// between FreePort and versitygw's bind.
		addr := "127.0.0.1:" + enginetest.FreePort(t)
		s.Endpoint = scheme + addr
		if err = s.start(t, bin, addr, logPath, tlsFlags); err == nil {
			break
		}
		if !strings.Contains(enginetest.Tail(logPath), "address already in use") {
			t.Fatalf("s3test: could not start versitygw: %v\n%s", err, enginetest.Tail(logPath))
		}
		t.Logf("s3test: versitygw lost its port (attempt %d): %v", attempt, err)
	}
	if err != nil {
		t.Fatalf("s3test: could not start versitygw: %v\n%s", err, enginetest.Tail(logPath))
	}
	s.Bucket = s.NewBucket(t)
	t.Logf("s3test: versitygw ready at %s in %v", s.Endpoint, time.Since(started).Round(time.Millisecond))
	return s
}

// start runs versitygw on addr and waits until it answers, registering its stop.
func (s *Server) start(t testing.TB, bin, addr, logPath string, tlsFlags []string) error {
	t.Helper()
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	defer logFile.Close() // the child has its own copy
	// With an IAM directory of its own (empty: the root account only), versitygw
	// answers an unknown access key as S3 does (403 InvalidAccessKeyId); without one
	// it says 404 XAdminUserNotFound.
	iam := filepath.Join(filepath.Dir(s.Root), "iam")
	if err := os.MkdirAll(iam, 0o700); err != nil {
		t.Fatalf("s3test: %v", err)
	}
	args := append([]string{"--port", addr, "--region", Region, "--quiet", "--iam-dir", iam}, tlsFlags...)
	cmd := exec.Command(bin, append(args, "posix", s.Root)...)
	// The credentials go in the environment, not the command line other local users
	// can read; nothing else of the test's environment is passed on.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(s.Root),
		"ROOT_ACCESS_KEY=" + s.AccessKeyID, "ROOT_SECRET_KEY=" + s.SecretAccessKey}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	enginetest.KillWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Fatalf("s3test: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	// Killed, not asked to stop: its graceful shutdown waits up to 10 s for the
	// keep-alive connections of the test's clients, and nothing it holds outlives the
	// test's temporary directory.
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	opts := &minio.Options{Creds: credentials.NewStaticV4(s.AccessKeyID, s.SecretAccessKey, ""), Region: Region, MaxRetries: 1}
	if s.Transport != nil {
		opts.Secure, opts.Transport = true, s.Transport
	}
	s.Client, err = minio.New(addr, opts)
	if err != nil {
		stop()
		t.Fatalf("s3test: %v", err)
	}
	if err := waitReady(s.Client, exited); err != nil {
		stop()
		return err
	}
	t.Cleanup(stop)
	return nil
}

// waitReady polls a signed ListBuckets until it succeeds, the process exits or
// startTimeout passes.
func waitReady(client *minio.Client, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.ListBuckets(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it was ready: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %w", startTimeout, err)
		}
	}
}

// NewBucket makes an empty bucket with a fresh name and returns the name.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := "wshub-" + enginetest.RandomHex(t, 8)
	if err := s.Client.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: Region}); err != nil {
		t.Fatalf("s3test: make bucket %s: %v", name, err)
	}
	return name
}

// Keys lists the object keys in bucket under prefix, sorted.
func (s *Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for obj := range s.Client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			t.Fatalf("s3test: list %s/%s: %v", bucket, prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	sort.Strings(keys)
	return keys
}

// Uploads lists the multipart uploads begun in bucket and neither completed nor
// aborted, by key.
func (s *Server) Uploads(t testing.TB, bucket string) []string {
	t.Helper()
	var keys []string
	for u := range s.Client.ListIncompleteUploads(context.Background(), bucket, "", true) {
		if u.Err != nil {
			t.Fatalf("s3test: list uploads of %s: %v", bucket, u.Err)
		}
		keys = append(keys, u.Key)
	}
	return keys
}

// makeCert writes a self-signed certificate for 127.0.0.1 and its key into dir, sets
// CA and Transport, and returns versitygw's flags for them.
func (s *Server) makeCert(t testing.TB, dir string) []string {
	t.Helper()
	crtPEM, keyPEM, err := enginetest.SelfSignedCert("s3test")
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	s.CA = crtPEM
	crt, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for path, data := range map[string][]byte{crt: s.CA, keyFile: keyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatalf("s3test: %v", err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CA)
	s.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(s.Transport.CloseIdleConnections)
	return []string{"--cert", crt, "--key", keyFile}
}

// built is where scripts/s3.sh puts versitygw.
var built = enginetest.Built{Pkg: "s3test", Program: "versitygw", Script: "scripts/s3.sh", EnvBinary: EnvBinary,
	EnvCache: "WSHUB_VERSITYGW_CACHE", CacheDir: "s3", Version: Version}
