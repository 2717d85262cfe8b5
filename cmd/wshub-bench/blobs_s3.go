package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Store starts versitygw, the S3 server the tests use (scripts/s3.sh builds it), on
// loopback with a bucket for B9, and returns the hub's settings for it and its stop.
func (r *run) s3Store(ctx context.Context) (blobStore, func(), error) {
	out, err := exec.CommandContext(ctx, "bash", "scripts/s3.sh").Output()
	if err != nil {
		return blobStore{}, nil, fmt.Errorf("scripts/s3.sh: %w", err)
	}
	bin, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "VERSITYGW=")
	if !ok {
		return blobStore{}, nil, fmt.Errorf("scripts/s3.sh said %q", out)
	}
	root, err := os.MkdirTemp(r.dataDir, "s3-")
	if err != nil {
		return blobStore{}, nil, err
	}
	for _, d := range []string{"data", "iam"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			return blobStore{}, nil, err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return blobStore{}, nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	secret := make([]byte, 20)
	if _, err := rand.Read(secret); err != nil {
		return blobStore{}, nil, err
	}
	access, key := "AKBENCH", hex.EncodeToString(secret)
	cmd := exec.Command(bin, "--port", addr, "--region", "us-east-1", "--quiet", "--iam-dir", filepath.Join(root, "iam"),
		"posix", filepath.Join(root, "data"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "ROOT_ACCESS_KEY=" + access, "ROOT_SECRET_KEY=" + key}
	if err := cmd.Start(); err != nil {
		return blobStore{}, nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	mc, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(access, key, ""), Region: "us-east-1", MaxRetries: 1})
	if err == nil {
		err = makeBucket(ctx, mc, "bench")
	}
	if err != nil {
		stop()
		return blobStore{}, nil, fmt.Errorf("versitygw: %w", err)
	}
	return blobStore{name: "s3", env: []string{"WSHUB_S3_ENDPOINT=http://" + addr, "WSHUB_S3_BUCKET=bench",
		"WSHUB_S3_REGION=us-east-1", "WSHUB_S3_ACCESS_KEY_ID=" + access, "WSHUB_S3_SECRET_ACCESS_KEY=" + key}}, stop, nil
}

// makeBucket makes the bucket once the server answers, trying for up to 30 s.
func makeBucket(ctx context.Context, mc *minio.Client, name string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := mc.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1"})
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
