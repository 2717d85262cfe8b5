package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wshub/wshub/adapters/s3"
	"github.com/wshub/wshub/core"
)

// s3CheckTimeout bounds the start-up check of the bucket.
const s3CheckTimeout = 30 * time.Second

// s3Blobs opens the bucket of WSHUB_BLOBS=s3 and checks, before the hub starts, that
// it exists and the credentials may use it: a hub that could not store or read an
// attachment should say so at start, not at the first upload.
func s3Blobs(cfg Config) (core.BlobStore, error) {
	opts, err := cfg.s3Options()
	if err != nil {
		return nil, err
	}
	store, err := s3.New(opts)
	if err != nil {
		return nil, fmt.Errorf("WSHUB_BLOBS=s3: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s3CheckTimeout)
	defer cancel()
	err = store.Check(ctx)
	switch {
	case errors.Is(err, s3.ErrNoBucket):
		return nil, fmt.Errorf("WSHUB_BLOBS=s3: %w (make the bucket, or correct WSHUB_S3_BUCKET; the hub does not make buckets)", err)
	case errors.Is(err, s3.ErrCredentials):
		return nil, fmt.Errorf("WSHUB_BLOBS=s3: %w (check WSHUB_S3_ACCESS_KEY_ID and WSHUB_S3_SECRET_ACCESS_KEY, and that they may list, read, write and delete in the bucket)", err)
	case err != nil:
		return nil, fmt.Errorf("WSHUB_BLOBS=s3: %w", err)
	}
	return store, nil
}

// s3Options reads the WSHUB_S3_* settings, naming whichever is missing or wrong.
func (c Config) s3Options() (s3.Options, error) {
	access, err := secretSetting("WSHUB_S3_ACCESS_KEY_ID", c.S3AccessKeyID, c.S3AccessKeyIDFile)
	if err != nil {
		return s3.Options{}, err
	}
	secret, err := secretSetting("WSHUB_S3_SECRET_ACCESS_KEY", c.S3SecretAccessKey, c.S3SecretAccessKeyFile)
	if err != nil {
		return s3.Options{}, err
	}
	var missing []string
	for _, s := range []struct{ name, value string }{
		{"WSHUB_S3_ENDPOINT", c.S3Endpoint}, {"WSHUB_S3_BUCKET", c.S3Bucket},
		{"WSHUB_S3_ACCESS_KEY_ID", access}, {"WSHUB_S3_SECRET_ACCESS_KEY", secret},
	} {
		if s.value == "" {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return s3.Options{}, fmt.Errorf("WSHUB_BLOBS=s3 needs %s (or the _FILE of a credential)", strings.Join(missing, ", "))
	}
	if _, err := s3.ParseEndpoint(c.S3Endpoint); err != nil {
		return s3.Options{}, fmt.Errorf("WSHUB_S3_ENDPOINT: %w", err)
	}
	if err := s3.CheckPrefix(c.S3Prefix); err != nil {
		return s3.Options{}, fmt.Errorf("WSHUB_S3_PREFIX: %w", err)
	}
	return s3.Options{Endpoint: c.S3Endpoint, Bucket: c.S3Bucket, Region: c.S3Region,
		AccessKeyID: access, SecretAccessKey: secret, Prefix: c.S3Prefix}, nil
}

// secretSetting is a credential given as name or read from name_FILE (the file's
// content, less surrounding white space: files usually end in a newline), not both.
func secretSetting(name, value, file string) (string, error) {
	file = strings.TrimSpace(file)
	if value != "" && file != "" {
		return "", fmt.Errorf("%s and %s_FILE are both set: set one", name, name)
	}
	if value != "" {
		return value, nil
	}
	return file, nil
}
